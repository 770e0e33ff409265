/**
 * `TestIssuer`: an OpenID provider on loopback for tests. It serves a real discovery document and JWKS over
 * HTTP and signs tokens with chosen claims (RS256 and ES256), so a test goes through the real verifier
 * (`oidcAuth`, jose) rather than a mock of it. Keys rotate on demand, and the issuer can go down and come back
 * to test outages.
 *
 * @example
 * const idp = await TestIssuer.start();
 * const auth = oidcAuth({ issuer: idp.url, audience: 'https://mcp.test/mcp' });
 * await auth.ready;
 * const token = await idp.sign({ sub: 'alice', aud: 'https://mcp.test/mcp', groups: ['admins'] });
 * // ... request with `Authorization: Bearer ${token}` ...
 * await idp.stop();
 *
 * @see docs/guides/testing.md
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { createHmac } from 'node:crypto';
import { type CryptoKey, type JWK, SignJWT, exportJWK, exportSPKI, generateKeyPair } from 'jose';
import { badOption, knownKeys, oneOf, optionsObject, stringOption } from '../core/options.js';

export type TestAlg = 'RS256' | 'ES256';

/** How the issuer is down: connection refused, HTTP 503 on every path, or accepted and never answered. */
export type OutageMode = 'refuse' | 'error' | 'hang';

export interface TestIssuerOptions {
  /** Path of the issuer URL, e.g. `/realms/test` (Keycloak style). Default none: `http://127.0.0.1:<port>`. */
  path?: string;
  /** Members merged into the discovery document (to serve a wrong `issuer` or `jwks_uri` on purpose). */
  discovery?: Record<string, unknown>;
}

export interface SignOptions {
  /** Default `RS256`. */
  alg?: TestAlg;
  /** The `kid` header. Default the current key's; `null` omits it. Another value names a key the JWKS lacks. */
  kid?: string | null;
  /** Sign with a key that is not (or no longer) in the JWKS, by its kid (see `rotate`, `createUnpublishedKey`). */
  keyId?: string;
  /** Seconds until `exp`. Default 300; `null` omits `exp`. Negative values give an expired token. */
  expiresIn?: number | null;
  /** Seconds from now for `nbf`. Default none. */
  notBefore?: number;
  /** `typ` header, e.g. `at+jwt`. Default `JWT`. */
  typ?: string;
}

const SIGN_OPTIONS = ['alg', 'kid', 'keyId', 'expiresIn', 'notBefore', 'typ'];

interface KeyEntry {
  kid: string;
  alg: TestAlg;
  privateKey: CryptoKey;
  publicJwk: JWK;
  spki: string;
  published: boolean;
}

const FACTORY = 'TestIssuer';
const ALGS: readonly TestAlg[] = ['RS256', 'ES256'];

/** Base64url of a JSON value. */
function b64json(v: unknown): string {
  return Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
}

/**
 * An OpenID provider on loopback for tests: a real discovery document and JWKS over HTTP, tokens signed with
 * the claims a test chooses (RS256, ES256), keys that rotate on demand, and outages on demand. Start it with
 * `TestIssuer.start()`.
 * @param options - {@link TestIssuerOptions} (of `start`)
 * @see docs/testing.md
 * @example
 * ```ts
 * import { oidcAuth } from 'mcpware/oidc-auth';
 * import { TestIssuer } from 'mcpware/testing';
 *
 * const idp = await TestIssuer.start();
 * const auth = oidcAuth({ issuer: idp.url, audience: 'https://mcp.test/mcp' });
 * await auth.ready;
 * const token = await idp.sign({ sub: 'alice', aud: 'https://mcp.test/mcp' });
 * console.log(`Authorization: Bearer ${token}`);
 * await idp.stop();
 * ```
 */
export class TestIssuer {
  /** The issuer URL (`iss`), e.g. `http://127.0.0.1:39123` or `http://127.0.0.1:39123/realms/test`. */
  readonly url: string;
  /** Requests served, per endpoint: assert how often the verifier fetched. */
  readonly stats = { discovery: 0, jwks: 0 };
  private readonly server: Server;
  private readonly port: number;
  private readonly path: string;
  private readonly discoveryExtra: Record<string, unknown>;
  private readonly keys: KeyEntry[] = [];
  private readonly current = new Map<TestAlg, string>();
  private readonly sockets = new Set<Socket>();
  private readonly hung = new Set<ServerResponse>();
  private generation = 0;
  private mode: 'up' | OutageMode = 'up';
  private listening = true;

  private constructor(server: Server, port: number, path: string, discovery: Record<string, unknown>) {
    this.server = server;
    this.port = port;
    this.path = path;
    this.discoveryExtra = discovery;
    this.url = `http://127.0.0.1:${port}${path}`;
  }

  /** Start on 127.0.0.1, on a random free port, with one RS256 and one ES256 key. */
  static async start(options?: TestIssuerOptions): Promise<TestIssuer> {
    const o = optionsObject(FACTORY, options);
    knownKeys(FACTORY, o, ['path', 'discovery']);
    const path = stringOption(FACTORY, 'path', o.path, '', true);
    if (path !== '' && !/^(\/[A-Za-z0-9._~-]{1,64}){1,8}$/.test(path)) {
      throw badOption(FACTORY, 'path', path, 'a path like /realms/test');
    }
    const discovery = optionsObject(FACTORY, o.discovery, 'option "discovery"');
    // The handler needs the instance, and the instance needs the port the server got: fill it in after listen.
    const holder: { issuer?: TestIssuer } = {};
    const server = createServer((req, res) => holder.issuer!.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('TestIssuer: no port');
    const issuer = new TestIssuer(server, addr.port, path, discovery);
    holder.issuer = issuer;
    issuer.track(server);
    await issuer.rotate();
    return issuer;
  }

  /** The discovery document's URL. */
  get discoveryUrl(): string {
    return `${this.url}/.well-known/openid-configuration`;
  }

  /** The JWKS URL. */
  get jwksUri(): string {
    return `${this.url}/jwks`;
  }

  /** Kids currently published in the JWKS. */
  get publishedKids(): string[] {
    return this.keys.filter((k) => k.published).map((k) => k.kid);
  }

  /** The kid `sign` uses by default for an algorithm. */
  currentKid(alg: TestAlg = 'RS256'): string {
    return this.current.get(alg)!;
  }

  /**
   * Make a new RS256 and ES256 key, publish them and sign with them from now on. The previous keys stay
   * published (as an IdP does during a rotation) unless `retire` is set. Returns the new kids.
   */
  async rotate(options: { retire?: boolean } = {}): Promise<Record<TestAlg, string>> {
    knownKeys(`${FACTORY}.rotate`, options, ['retire']);
    this.generation++;
    const made = {} as Record<TestAlg, string>;
    for (const alg of ['RS256', 'ES256'] as const) {
      const kid = `${alg.toLowerCase()}-${this.generation}`;
      const entry = await this.makeKey(alg, kid);
      entry.published = true;
      if (options.retire) {
        for (const k of this.keys) if (k.alg === alg) k.published = false;
      }
      this.keys.push(entry);
      this.current.set(alg, kid);
      made[alg] = kid;
    }
    return made;
  }

  /** Stop publishing a key (tokens it signed stop verifying once the verifier refetches). */
  retire(kid: string): void {
    const k = this.keys.find((x) => x.kid === kid);
    if (!k) throw new Error(`TestIssuer: no key ${kid}`);
    k.published = false;
  }

  /**
   * A key the issuer can sign with but does not publish. Sign with it (`keyId`) and a published `kid` header to
   * forge a token that names a real key but was signed by someone else.
   */
  async createUnpublishedKey(
    alg: TestAlg = 'RS256',
    kid = `unpublished-${alg.toLowerCase()}-${this.keys.length}`,
  ): Promise<string> {
    const entry = await this.makeKey(alg, kid);
    this.keys.push(entry);
    return kid;
  }

  /**
   * Sign a token. Defaults: `iss` = this issuer, `iat` = now, `exp` = now + 300 s; `claims` override them
   * (pass `iss: 'https://other'` for a foreign issuer).
   */
  async sign(claims: Record<string, unknown>, options: SignOptions = {}): Promise<string> {
    knownKeys(`${FACTORY}.sign`, options, SIGN_OPTIONS);
    const alg = oneOf(`${FACTORY}.sign`, 'alg', options.alg, ALGS, 'RS256');
    const keyKid = options.keyId ?? this.current.get(alg)!;
    const key = this.keys.find((k) => k.kid === keyKid);
    if (!key || key.alg !== alg) throw new Error(`TestIssuer: no ${alg} key ${keyKid}`);
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = { iss: this.url, iat: now };
    if (options.expiresIn !== null) payload.exp = now + (options.expiresIn ?? 300);
    if (options.notBefore !== undefined) payload.nbf = now + options.notBefore;
    Object.assign(payload, claims);
    const header: { alg: TestAlg; typ: string; kid?: string } = { alg, typ: options.typ ?? 'JWT' };
    const kid = options.kid === undefined ? key.kid : options.kid;
    if (kid !== null) header.kid = kid;
    return new SignJWT(payload).setProtectedHeader(header).sign(key.privateKey);
  }

  /** An unsigned token (`alg: none`) with the same defaults as `sign`. */
  unsigned(claims: Record<string, unknown>): string {
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: this.url, iat: now, exp: now + 300, ...claims };
    return `${b64json({ alg: 'none', typ: 'JWT' })}.${b64json(payload)}.`;
  }

  /**
   * The HS/RS confusion attack: an HS256 token whose HMAC secret is the issuer's public RSA key (its SPKI PEM),
   * with the kid of that key. A verifier that let the token's `alg` pick how to use the key would accept it.
   */
  hmacWithPublicKey(
    claims: Record<string, unknown>,
    options: { kid?: string; secret?: 'pem' | 'jwk' } = {},
  ): string {
    knownKeys(`${FACTORY}.hmacWithPublicKey`, options, ['kid', 'secret']);
    const kid = options.kid ?? this.currentKid('RS256');
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`TestIssuer: no key ${kid}`);
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: this.url, iat: now, exp: now + 300, ...claims };
    const input = `${b64json({ alg: 'HS256', typ: 'JWT', kid })}.${b64json(payload)}`;
    const secret = options.secret === 'jwk' ? JSON.stringify(key.publicJwk) : key.spki;
    const sig = createHmac('sha256', secret).update(input).digest('base64url');
    return `${input}.${sig}`;
  }

  /** Go down: `refuse` closes the port (connection refused), `error` answers 503, `hang` never answers. */
  async down(mode: OutageMode = 'refuse'): Promise<void> {
    this.mode = oneOf<OutageMode>(`${FACTORY}.down`, 'mode', mode, ['refuse', 'error', 'hang'], 'refuse');
    if (mode === 'refuse' && this.listening) {
      this.listening = false;
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.dropConnections();
      await closed;
    }
  }

  /** Come back up on the same port. */
  async up(): Promise<void> {
    this.mode = 'up';
    this.releaseHung();
    if (!this.listening) {
      await new Promise<void>((resolve, reject) => {
        this.server.once('error', reject);
        this.server.listen(this.port, '127.0.0.1', () => {
          this.server.removeListener('error', reject);
          resolve();
        });
      });
      this.listening = true;
    }
  }

  /** Stop the server and drop every connection. */
  async stop(): Promise<void> {
    this.releaseHung();
    if (this.listening) {
      this.listening = false;
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.dropConnections();
      await closed;
    }
  }

  private async makeKey(alg: TestAlg, kid: string): Promise<KeyEntry> {
    if (this.keys.some((k) => k.kid === kid)) throw new Error(`TestIssuer: a key ${kid} exists already`);
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const jwk = await exportJWK(publicKey);
    const publicJwk: JWK = { ...jwk, kid, alg, use: 'sig' };
    return { kid, alg, privateKey, publicJwk, spki: await exportSPKI(publicKey), published: false };
  }

  private track(server: Server): void {
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  private dropConnections(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.hung.clear();
  }

  private releaseHung(): void {
    for (const res of this.hung) res.destroy();
    this.hung.clear();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (this.mode === 'hang') {
      this.hung.add(res);
      return;
    }
    if (this.mode === 'error') {
      this.send(res, 503, { error: 'temporarily_unavailable' });
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      this.send(res, 405, { error: 'method_not_allowed' });
      return;
    }
    if (path === `${this.path}/.well-known/openid-configuration`) {
      this.stats.discovery++;
      this.send(res, 200, {
        issuer: this.url,
        jwks_uri: this.jwksUri,
        authorization_endpoint: `${this.url}/authorize`,
        token_endpoint: `${this.url}/token`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        ...this.discoveryExtra,
      });
      return;
    }
    if (path === `${this.path}/jwks`) {
      this.stats.jwks++;
      this.send(res, 200, { keys: this.keys.filter((k) => k.published).map((k) => k.publicJwk) });
      return;
    }
    this.send(res, 404, { error: 'not_found' });
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.setHeader('Cache-Control', 'no-store');
    res.end(text);
  }
}
