/** guardOrigin(): every option is validated when the factory is called; a typo must not switch a check off. */
import http from 'node:http';
import request from 'supertest';
import { guardOrigin } from '../../../middleware/guard-origin/index';

describe('guardOrigin() options', () => {
  test('a misspelt option is refused, naming the factory, the option and the known name', () => {
    expect(() => guardOrigin({ allowedHost: ['localhost:3000'] } as never)).toThrow(TypeError);
    expect(() => guardOrigin({ allowedHost: ['localhost:3000'] } as never)).toThrow(
      /^guardOrigin: unknown option "allowedHost"; did you mean "allowedHosts"\?/,
    );
    expect(() => guardOrigin({ allowedOrigin: '*' } as never)).toThrow(/did you mean "allowedOrigins"/);
    expect(() => guardOrigin({ origins: ['http://a'] } as never)).toThrow(/unknown option "origins"/);
  });

  test('the options argument must be an object', () => {
    expect(() => guardOrigin(null as never)).toThrow(/^guardOrigin: options must be an object/);
    expect(() => guardOrigin([] as never)).toThrow(TypeError);
  });

  test('with the right name the Host check is on', async () => {
    const server = http.createServer((req, res) =>
      guardOrigin({ allowedHosts: ['allowed.example:80'] })(req, res, () => res.end('ok')),
    );
    const refused = await request(server).post('/mcp').set('Host', 'evil.example:80').send('{}');
    expect(refused.status).toBe(403);
    const passed = await request(server).post('/mcp').set('Host', 'allowed.example:80').send('{}');
    expect(passed.status).toBe(200);
  });
});
