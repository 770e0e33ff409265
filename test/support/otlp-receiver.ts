/**
 * A real OTLP/HTTP receiver for tests: `POST /v1/traces` and `POST /v1/metrics` on 127.0.0.1 (a free port), in
 * `application/json` and `application/x-protobuf` (gzip accepted), decoded to plain objects: spans with their
 * attributes, events, links and parent span id; metric data points with their attributes and histogram buckets.
 * `waitFor` resolves when what arrived satisfies a predicate, so a test waits for the exporter, never for a clock.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

/** An attribute value as OTLP carries it (`int` values as numbers, bytes as lowercase hex). */
export type OtlpValue = string | number | boolean | null | OtlpValue[] | { [key: string]: OtlpValue };
export type OtlpAttributes = Record<string, OtlpValue>;

export type SpanKindName = 'UNSPECIFIED' | 'INTERNAL' | 'SERVER' | 'CLIENT' | 'PRODUCER' | 'CONSUMER';
export type StatusCodeName = 'UNSET' | 'OK' | 'ERROR';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: SpanKindName;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttributes;
  events: Array<{ name: string; timeUnixNano: string; attributes: OtlpAttributes }>;
  links: Array<{ traceId: string; spanId: string; traceState?: string; attributes: OtlpAttributes }>;
  status: { code: StatusCodeName; message?: string };
  resource: OtlpAttributes;
  scope: { name: string; version?: string };
  /** The wire format it arrived in. */
  protocol: 'json' | 'protobuf';
}

export type MetricType = 'gauge' | 'sum' | 'histogram' | 'exponentialHistogram' | 'summary';

export interface ReceivedDataPoint {
  metric: string;
  description?: string;
  unit?: string;
  type: MetricType;
  attributes: OtlpAttributes;
  startTimeUnixNano?: string;
  timeUnixNano?: string;
  /** A gauge's or sum's value. */
  value?: number;
  /** A histogram's. */
  count?: number;
  sum?: number;
  min?: number;
  max?: number;
  bucketCounts?: number[];
  explicitBounds?: number[];
  resource: OtlpAttributes;
  scope: { name: string; version?: string };
  protocol: 'json' | 'protobuf';
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what `OTEL_EXPORTER_OTLP_ENDPOINT` takes. */
  readonly url: string;
  readonly tracesUrl: string;
  readonly metricsUrl: string;
  readonly spans: readonly ReceivedSpan[];
  readonly points: readonly ReceivedDataPoint[];
  /** Every export request: path, content type and decoded item count. */
  readonly requests: ReadonlyArray<{ path: string; contentType: string; items: number }>;
  /** Requests refused (bad path, type or body), with the reason. */
  readonly errors: readonly string[];
  /**
   * Resolve with the predicate's first truthy answer, checked now and after each export request; reject after
   * `timeoutMs` with what arrived so far.
   */
  waitFor<T>(predicate: (r: OtlpReceiver) => T | undefined | null | false, timeoutMs?: number): Promise<T>;
  /** Forget what arrived. */
  reset(): void;
  close(): Promise<void>;
}

const MAX_BODY = 16 * 1024 * 1024;
const SPAN_KINDS: SpanKindName[] = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUS_CODES: StatusCodeName[] = ['UNSET', 'OK', 'ERROR'];

/** The OTLP messages the receiver decodes (opentelemetry-proto's field numbers; unknown fields are skipped). */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Link {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; fixed32 flags = 6;
}
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
  repeated Event events = 11; repeated Link links = 13; Status status = 15; fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message NumberDataPoint {
  fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3; double as_double = 4; sfixed64 as_int = 6;
  repeated KeyValue attributes = 7; uint32 flags = 8;
}
message HistogramDataPoint {
  fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3; fixed64 count = 4; optional double sum = 5;
  repeated fixed64 bucket_counts = 6; repeated double explicit_bounds = 7; repeated KeyValue attributes = 9;
  uint32 flags = 10; optional double min = 11; optional double max = 12;
}
message ExponentialHistogramDataPoint {
  repeated KeyValue attributes = 1; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3; fixed64 count = 4;
  optional double sum = 5; optional double min = 12; optional double max = 13;
}
message SummaryDataPoint {
  fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3; fixed64 count = 4; double sum = 5;
  repeated KeyValue attributes = 7;
}
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum { repeated NumberDataPoint data_points = 1; int32 aggregation_temporality = 2; bool is_monotonic = 3; }
message Histogram { repeated HistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message ExponentialHistogram { repeated ExponentialHistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message Summary { repeated SummaryDataPoint data_points = 1; }
message Metric {
  string name = 1; string description = 2; string unit = 3;
  oneof data { Gauge gauge = 5; Sum sum = 7; Histogram histogram = 9; ExponentialHistogram exponential_histogram = 10; Summary summary = 11; }
}
message ScopeMetrics { InstrumentationScope scope = 1; repeated Metric metrics = 2; string schema_url = 3; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; string schema_url = 3; }
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
`;

const root = protobuf.parse(OTLP_PROTO, { keepCase: false }).root;
const TraceRequest = root.lookupType('otlp.ExportTraceServiceRequest');
const MetricsRequest = root.lookupType('otlp.ExportMetricsServiceRequest');

/** A protobuf body as a plain object with OTLP/JSON's field names (bytes as arrays, 64-bit integers as strings). */
function protoObject(type: protobuf.Type, body: Buffer): unknown {
  return type.toObject(type.decode(body), { longs: String, enums: Number, bytes: Array, defaults: false });
}

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : undefined;
const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && v !== '' ? Number(v) : undefined;

/** An id: hex in OTLP/JSON, a byte array from protobuf. Empty → undefined. */
function hexId(v: unknown): string | undefined {
  if (typeof v === 'string') return v === '' ? undefined : v.toLowerCase();
  if (Array.isArray(v) && v.length > 0) return Buffer.from(v as number[]).toString('hex');
  return undefined;
}

function anyValue(v: unknown): OtlpValue {
  const o = asObj(v);
  if ('stringValue' in o) return String(o.stringValue);
  if ('boolValue' in o) return Boolean(o.boolValue);
  if ('intValue' in o) return num(o.intValue) ?? null;
  if ('doubleValue' in o) return num(o.doubleValue) ?? null;
  if ('arrayValue' in o) return asArr(asObj(o.arrayValue).values).map(anyValue);
  if ('kvlistValue' in o) return attributes(asObj(o.kvlistValue).values);
  if ('bytesValue' in o) {
    const b = o.bytesValue;
    return Array.isArray(b)
      ? Buffer.from(b as number[]).toString('hex')
      : Buffer.from(String(b), 'base64').toString('hex');
  }
  return null;
}

function attributes(list: unknown): OtlpAttributes {
  const out: OtlpAttributes = {};
  for (const kv of asArr(list)) {
    const o = asObj(kv);
    const key = str(o.key);
    if (key !== undefined)
      Object.defineProperty(out, key, { value: anyValue(o.value), enumerable: true, writable: true });
  }
  return out;
}

function scopeOf(v: unknown): { name: string; version?: string } {
  const o = asObj(v);
  const version = str(o.version);
  return { name: str(o.name) ?? '', ...(version ? { version } : {}) };
}

function decodeSpans(request: unknown, protocol: ReceivedSpan['protocol']): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of asArr(asObj(request).resourceSpans)) {
    const resource = attributes(asObj(asObj(rs).resource).attributes);
    for (const ss of asArr(asObj(rs).scopeSpans)) {
      const scope = scopeOf(asObj(ss).scope);
      for (const raw of asArr(asObj(ss).spans)) {
        const s = asObj(raw);
        const status = asObj(s.status);
        const parentSpanId = hexId(s.parentSpanId);
        const traceState = str(s.traceState) || undefined;
        out.push({
          traceId: hexId(s.traceId) ?? '',
          spanId: hexId(s.spanId) ?? '',
          ...(parentSpanId ? { parentSpanId } : {}),
          ...(traceState ? { traceState } : {}),
          name: str(s.name) ?? '',
          kind: SPAN_KINDS[num(s.kind) ?? 0] ?? 'UNSPECIFIED',
          startTimeUnixNano: str(s.startTimeUnixNano) ?? '0',
          endTimeUnixNano: str(s.endTimeUnixNano) ?? '0',
          attributes: attributes(s.attributes),
          events: asArr(s.events).map((e) => ({
            name: str(asObj(e).name) ?? '',
            timeUnixNano: str(asObj(e).timeUnixNano) ?? '0',
            attributes: attributes(asObj(e).attributes),
          })),
          links: asArr(s.links).map((l) => {
            const ts = str(asObj(l).traceState) || undefined;
            return {
              traceId: hexId(asObj(l).traceId) ?? '',
              spanId: hexId(asObj(l).spanId) ?? '',
              ...(ts ? { traceState: ts } : {}),
              attributes: attributes(asObj(l).attributes),
            };
          }),
          status: {
            code: STATUS_CODES[num(status.code) ?? 0] ?? 'UNSET',
            ...(str(status.message) ? { message: str(status.message) } : {}),
          },
          resource,
          scope,
          protocol,
        });
      }
    }
  }
  return out;
}

const METRIC_TYPES: MetricType[] = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'];

function dataPoint(type: MetricType, p: Obj): Partial<ReceivedDataPoint> {
  const optional = (k: 'sum' | 'min' | 'max' | 'count'): Partial<ReceivedDataPoint> => {
    const v = num(p[k]);
    return v === undefined ? {} : { [k]: v };
  };
  const times = {
    ...(str(p.startTimeUnixNano) ? { startTimeUnixNano: str(p.startTimeUnixNano) } : {}),
    ...(str(p.timeUnixNano) ? { timeUnixNano: str(p.timeUnixNano) } : {}),
  };
  if (type === 'gauge' || type === 'sum') return { ...times, value: num(p.asDouble) ?? num(p.asInt) ?? 0 };
  const base = { ...times, ...optional('count'), ...optional('sum'), ...optional('min'), ...optional('max') };
  if (type !== 'histogram') return base;
  return {
    ...base,
    bucketCounts: asArr(p.bucketCounts).map((c) => num(c) ?? 0),
    explicitBounds: asArr(p.explicitBounds).map((c) => num(c) ?? 0),
  };
}

function decodePoints(request: unknown, protocol: ReceivedDataPoint['protocol']): ReceivedDataPoint[] {
  const out: ReceivedDataPoint[] = [];
  for (const rm of asArr(asObj(request).resourceMetrics)) {
    const resource = attributes(asObj(asObj(rm).resource).attributes);
    for (const sm of asArr(asObj(rm).scopeMetrics)) {
      const scope = scopeOf(asObj(sm).scope);
      for (const raw of asArr(asObj(sm).metrics)) {
        const m = asObj(raw);
        const type = METRIC_TYPES.find((t) => t in m);
        if (type === undefined) continue;
        const description = str(m.description) || undefined;
        const unit = str(m.unit) || undefined;
        for (const p of asArr(asObj(m[type]).dataPoints)) {
          out.push({
            metric: str(m.name) ?? '',
            ...(description ? { description } : {}),
            ...(unit ? { unit } : {}),
            type,
            attributes: attributes(asObj(p).attributes),
            ...dataPoint(type, asObj(p)),
            resource,
            scope,
            protocol,
          });
        }
      }
    }
  }
  return out;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error(`body over ${MAX_BODY} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Start a receiver on 127.0.0.1 (a free port). Close it in `afterAll`/`afterEach`.
 * @example
 * ```ts
 * const otlp = await startOtlpReceiver();
 * const exporter = new OTLPTraceExporter({ url: otlp.tracesUrl });
 * // … export …
 * const span = await otlp.waitFor((r) => r.spans.find((s) => s.name === 'tools/call echo'));
 * await otlp.close();
 * ```
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  let spans: ReceivedSpan[] = [];
  let points: ReceivedDataPoint[] = [];
  let requests: Array<{ path: string; contentType: string; items: number }> = [];
  let errors: string[] = [];
  const waiters = new Set<() => void>();

  const refuse = (res: http.ServerResponse, status: number, why: string) => {
    errors.push(why);
    res.writeHead(status, { 'content-type': 'text/plain' }).end(why);
    for (const w of [...waiters]) w();
  };

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (req.method !== 'POST' || (path !== '/v1/traces' && path !== '/v1/metrics'))
      return refuse(res, 404, `${req.method} ${path}: not an OTLP endpoint`);
    const protocol =
      contentType === 'application/json'
        ? 'json'
        : contentType === 'application/x-protobuf'
          ? 'protobuf'
          : undefined;
    if (!protocol) return refuse(res, 415, `${path}: unsupported content type ${contentType}`);
    readBody(req).then(
      (raw) => {
        let items: number;
        try {
          const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
          const traces = path === '/v1/traces';
          const decoded =
            protocol === 'json'
              ? (JSON.parse(body.toString('utf8')) as unknown)
              : protoObject(traces ? TraceRequest : MetricsRequest, body);
          if (traces) {
            const got = decodeSpans(decoded, protocol);
            spans = spans.concat(got);
            items = got.length;
          } else {
            const got = decodePoints(decoded, protocol);
            points = points.concat(got);
            items = got.length;
          }
        } catch (err) {
          return refuse(res, 400, `${path}: undecodable ${protocol} body: ${(err as Error).message}`);
        }
        requests.push({ path, contentType, items });
        if (protocol === 'json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        for (const w of [...waiters]) w();
      },
      (err: Error) => refuse(res, 413, `${path}: ${err.message}`),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const receiver: OtlpReceiver = {
    url,
    tracesUrl: `${url}/v1/traces`,
    metricsUrl: `${url}/v1/metrics`,
    get spans() {
      return spans;
    },
    get points() {
      return points;
    },
    get requests() {
      return requests;
    },
    get errors() {
      return errors;
    },
    waitFor<T>(predicate: (r: OtlpReceiver) => T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = (): boolean => {
          const v = predicate(receiver);
          if (v === undefined || v === null || v === false) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(v);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `OTLP receiver: not satisfied after ${timeoutMs} ms; spans: ${JSON.stringify(spans.map((s) => s.name))}, ` +
                `metrics: ${JSON.stringify([...new Set(points.map((p) => p.metric))])}, errors: ${JSON.stringify(errors)}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    reset() {
      spans = [];
      points = [];
      requests = [];
      errors = [];
    },
    close() {
      for (const w of [...waiters]) w();
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
  return receiver;
}
