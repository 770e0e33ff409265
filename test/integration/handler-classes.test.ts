/**
 * Handler objects as users write them: class instances whose methods live on the prototype. The methods a class
 * (and its superclasses) define are routable; `constructor` and `Object.prototype` members never are. Over HTTP,
 * in both eras, on bare node:http and Express.
 */
import { EventEmitter } from 'node:events';
import { checkHeaders, classifyRevision, dispatch, parse } from '../../index';
import type { JsonObject } from '../../lib/jsonrpc';
import { ERAS, PLATFORMS, stack, type Stack } from '../support/dispatch-harness';

const serverInfo = { name: 'classes', version: '1' };
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
const NAMES = Object.getOwnPropertyNames(Object.prototype);

class Tools {
  readonly greeting = 'hello';
  list() {
    return { tools: [{ name: 'greet', inputSchema: { type: 'object' } }] };
  }
  call(params: JsonObject) {
    return text(`${this.greeting} ${String((params.arguments as JsonObject | undefined)?.who ?? 'world')}`);
  }
}

/** A subclass overriding one method: the override answers, the inherited one still does. */
class LoudTools extends Tools {
  override call(params: JsonObject) {
    const r = super.call(params);
    return text(r.content[0]!.text.toUpperCase());
  }
}

class Resources {
  list() {
    return { resources: [{ uri: 'mem://a', name: 'a' }] };
  }
  read(params: JsonObject) {
    return { contents: [{ uri: params.uri, text: 'A' }] };
  }
  templatesList() {
    return { resourceTemplates: [{ uriTemplate: 'mem://{x}', name: 'x' }] };
  }
}

class Prompts {
  list() {
    return { prompts: [{ name: 'p' }] };
  }
  get(params: JsonObject) {
    return { messages: [{ role: 'user', content: { type: 'text', text: `prompt ${String(params.name)}` } }] };
  }
}

/** A class on a library base: the base's members (on/emit/…) are not the class's own methods. */
class Emitting extends EventEmitter {
  ping() {
    return {};
  }
}

const stackOf = (platform: (typeof PLATFORMS)[number], tools: object) =>
  stack(platform, [
    parse(),
    classifyRevision(),
    checkHeaders(),
    dispatch({
      anonymous: true,
      handlers: { tools, resources: new Resources(), prompts: new Prompts(), custom: new Emitting() },
      serverInfo,
    }),
  ]);

describe.each(PLATFORMS)('class instances as handler objects on %s', (platform) => {
  let s: Stack;
  let loud: Stack;
  beforeAll(async () => {
    s = await stackOf(platform, new Tools());
    loud = await stackOf(platform, new LoudTools());
  });
  afterAll(async () => {
    await s.close();
    await loud.close();
  });

  describe.each(ERAS)('%s', (era) => {
    test('tools/list and tools/call reach the prototype methods, with this bound', async () => {
      const c = s.client({ era });
      const list = await c.listTools();
      expect(list.body.error).toBeUndefined();
      expect(list.status).toBe(200);
      expect(list.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['greet']);
      const call = await c.callTool('greet', { who: 'ada' });
      expect(call.status).toBe(200);
      expect(call.body.result.content[0].text).toBe('hello ada');
    });

    test('resources/list, resources/read and resources/templates/list reach the prototype methods', async () => {
      const c = s.client({ era });
      expect((await c.listResources()).body.result.resources[0].uri).toBe('mem://a');
      expect((await c.readResource('mem://a')).body.result.contents[0].text).toBe('A');
      const t = await c.listResourceTemplates();
      expect(t.body.result.resourceTemplates[0].uriTemplate).toBe('mem://{x}');
    });

    test('prompts/list and prompts/get reach the prototype methods', async () => {
      const c = s.client({ era });
      expect((await c.listPrompts()).body.result.prompts[0].name).toBe('p');
      const g = await c.getPrompt('p');
      expect(g.body.result.messages[0].content.text).toBe('prompt p');
    });

    test('a subclass: the override answers tools/call, the inherited list still answers', async () => {
      const c = loud.client({ era });
      expect((await c.listTools()).body.result.tools[0].name).toBe('greet');
      expect((await c.callTool('greet', { who: 'ada' })).body.result.content[0].text).toBe('HELLO ADA');
    });

    test('a method a class defines on a library base answers; the base library members do not', async () => {
      const c = s.client({ era });
      expect((await c.request('custom/ping')).body.result).toBeDefined();
      for (const name of ['emit', 'on', 'removeAllListeners', 'setMaxListeners']) {
        const r = await c.request(`custom/${name}`);
        expect(r.body.error?.code).toBe(-32601);
      }
    });

    test.each(NAMES)('tools/%s is an unknown method', async (name) => {
      const r = await s.client({ era }).request(`tools/${name}`);
      expect(r.body.error?.code).toBe(-32601);
      expect(r.status).toBe(era === 'modern' ? 404 : 200);
    });
  });
});
