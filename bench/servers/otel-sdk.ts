/**
 * The OpenTelemetry SDK of `mcpware-node-otel`, registered as an application registers it (batch span processor,
 * OTLP/HTTP protobuf exporters, periodic metric reader, AsyncLocalStorage context manager, W3C propagators),
 * exporting to a loopback collector that discards (bench/servers/otlp-sink.ts, a process of its own).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  type ExportResult,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { StatsProvider } from './common.js';

/** ms between metric exports of the bench's SDK: several per timed run. */
const METRIC_INTERVAL_MS = 5000;

/** Starts the discarding collector (compiled next to this file) and resolves with its base URL. */
export function startSink(): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'otlp-sink.js')], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', (line) => {
      resolve(`http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`);
    });
    child.once('exit', (code) => reject(new Error(`the OTLP sink exited with ${code}`)));
  });
}

/** A span exporter that counts what its inner exporter delivered and what it failed to. */
function counting(inner: SpanExporter, counts: { spansExported: number; spansFailed: number }): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
      inner.export(spans, (r) => {
        if (r.code === 0) counts.spansExported += spans.length;
        else counts.spansFailed += spans.length;
        done(r);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * Registers the bench's SDK as the process's global OpenTelemetry, exporting to `collector`. The stats report the
 * spans exported and failed (the harness's test checks the export really happens).
 */
export function registerBenchSdk(collector: string): StatsProvider {
  const counts = { spansExported: 0, spansFailed: 0 };
  const resource = resourceFromAttributes({ 'service.name': 'mcpware-bench' });
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [
      // The processor's defaults (5 s between batches of at most 512, a queue of 2048), or the OTEL_BSP_* variables.
      new BatchSpanProcessor(counting(new OTLPTraceExporter({ url: `${collector}/v1/traces` }), counts)),
    ],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${collector}/v1/metrics` }),
        exportIntervalMillis: METRIC_INTERVAL_MS,
        exportTimeoutMillis: METRIC_INTERVAL_MS,
      }),
    ],
  });
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  return () => ({ otel: { ...counts } });
}
