/**
 * A CallContext built by hand for calling handler objects directly: it is the input a dispatcher would pass,
 * made of real objects (a real IncomingMessage on a real socket, a real AbortSignal).
 */
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { CallContext } from '../../core/contract';
import type { Principal } from '../../core/types';

export interface CtxOptions {
  method?: string;
  era?: 'modern' | 'legacy';
  principal?: Principal;
}

export function makeCtx(opts: CtxOptions = {}): CallContext & { errors: string[] } {
  const errors: string[] = [];
  const req = new IncomingMessage(new Socket());
  return {
    method: opts.method ?? 'resources/list',
    id: 1,
    era: opts.era ?? 'modern',
    version: opts.era === 'legacy' ? '2025-11-25' : '2026-07-28',
    principal: opts.principal,
    meta: undefined,
    clientCapabilities: {},
    locals: {},
    req,
    signal: new AbortController().signal,
    charge: () => undefined,
    logger: { error: (m: string) => void errors.push(m) },
    errors,
  };
}

export function principal(userId: string, roles: string[] = []): Principal {
  return { userId, groups: [], roles, method: 'test' };
}
