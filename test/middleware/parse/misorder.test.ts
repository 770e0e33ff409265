/**
 * parse() finding the body already read by a body parser that is not mcpware's (an app-wide express.json(),
 * express.urlencoded(), or anything that drained the stream) says so once per instance through the logger:
 * that parser's size limit and error pages apply, not parse()'s. The answers stay what they were.
 */
import type { Server } from 'node:http';
import express from 'express';
import request from 'supertest';
import { parse } from '../../../middleware/parse/index';
import { rejectBatch } from '../../../middleware/reject-batch/index';
import type { Middleware } from '../../../core/types';
import { jsonLogger } from '../../support/json-logger';
import { HOSTS, hostServer } from '../../support/hosts';
import { echoFinal } from '../../support/servers';

const MESSAGE = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
const FORM = 'jsonrpc=2.0&id=7&method=tools/list';

const post = (server: Server, type: string, body: string) =>
  request(server).post('/mcp').set('Content-Type', type).send(body);

/** Drains the body without saying so (no `req.body`, no `req._body`). */
const drain: Middleware = (req, _res, next) => {
  req.resume();
  req.on('end', () => next());
};

describe.each(HOSTS)('on %s', (host) => {
  const serve = (before: Middleware[], mcp: Middleware[]) => hostServer(host, { before, mcp });

  test.each<[string, Middleware, string, string, number]>([
    ['express.json()', express.json() as unknown as Middleware, 'application/json', MESSAGE, 200],
    [
      'express.urlencoded()',
      express.urlencoded({ extended: false }) as unknown as Middleware,
      'application/x-www-form-urlencoded',
      FORM,
      415,
    ],
    ['a parser that drains the stream', drain, 'application/json', MESSAGE, 400],
  ])('%s before parse(): one warning for many requests', async (_name, parser, type, body, status) => {
    const log = jsonLogger();
    const server = serve([parser], [parse({ logger: log.logger }), echoFinal]);
    for (let i = 0; i < 4; i++) expect((await post(server, type, body)).status).toBe(status);
    const lines = log.records('parse:');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn' });
    expect(lines[0]!.message).toMatch(/already read/);
    expect(lines[0]!.message).toMatch(/express\.json\(\)/);
  });

  test('parse() reading the body itself, or after rejectBatch() read it: no warning', async () => {
    const log = jsonLogger();
    const alone = serve([], [parse({ logger: log.logger }), echoFinal]);
    const afterBatch = serve([], [rejectBatch(), parse({ logger: log.logger }), echoFinal]);
    expect((await post(alone, 'application/json', MESSAGE)).status).toBe(200);
    expect((await post(afterBatch, 'application/json', MESSAGE)).status).toBe(200);
    expect((await post(alone, 'application/json', '{')).status).toBe(400);
    expect(log.records('parse:')).toEqual([]);
  });

  test('an app-wide express.json() that left a text/plain body alone: no warning, 415 from parse()', async () => {
    const log = jsonLogger();
    const server = serve(
      [express.json() as unknown as Middleware],
      [parse({ logger: log.logger }), echoFinal],
    );
    expect((await post(server, 'text/plain', MESSAGE)).status).toBe(415);
    expect(log.records('parse:')).toEqual([]);
  });
});
