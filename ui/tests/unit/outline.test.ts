import { describe, expect, it } from 'vitest';
import { diagnose, outlineOf, placeholderNames, previewFirst } from '../../src/lib/console/assist';
import type { CommandOutline, TextPosition, Transport, ValidateRequest, ValidateResponse } from '../../src/transport';

const at = (offset: number): TextPosition => ({ line: 1, column: offset + 1, offset, utf16: offset });

function command(kind: CommandOutline['kind'], names: string[] = []): CommandOutline {
  return {
    kind,
    writes: kind === 'write',
    from: at(0),
    to: at(1),
    placeholders: names.map((name, i) => ({ name, from: at(i), to: at(i + 1) })),
  };
}

/** A host whose validate answers `answer(request)` and records every request. */
function host(answer: (request: ValidateRequest) => Partial<ValidateResponse>) {
  const requests: ValidateRequest[] = [];
  const transport = {
    kind: 'http',
    async validate(request: ValidateRequest): Promise<ValidateResponse> {
      requests.push(request);
      return { ok: true, commands: 0, schema_checked: false, diagnostics: [], outline: [], ...answer(request) };
    },
  } as unknown as Transport;
  return { transport, requests };
}

describe('previewFirst', () => {
  it('previews a text when any of its commands writes, wherever it stands', () => {
    // A write after a query on the same line: what the console's old text test missed.
    expect(previewFirst([command('query'), command('write')])).toBe(true);
    expect(previewFirst([command('query'), command('meta')])).toBe(false);
    expect(previewFirst([])).toBe(false);
  });
  it('previews when the engine cannot say, and not a text the engine refuses to parse', () => {
    expect(previewFirst(undefined)).toBe(true);
    expect(previewFirst(null)).toBe(false);
  });
});

describe('placeholderNames', () => {
  it('lists each name once, in the order of the commands', () => {
    expect(placeholderNames([command('query', ['t', 'n', 't']), command('write', ['n', 'x'])])).toEqual(['t', 'n', 'x']);
  });
});

describe('outlineOf', () => {
  it("returns the engine's outline, or null for a text that does not parse", async () => {
    const outline = [command('query'), command('write')];
    expect(await outlineOf(host(() => ({ commands: 2, outline })).transport, 'FIND… UPSERT…')).toEqual(outline);
    const broken = host(() => ({ ok: false, commands: 0 }));
    expect(await outlineOf(broken.transport, 'UPSERT {')).toBeNull();
    expect(await outlineOf(broken.transport, '  ')).toEqual([]);
    expect(broken.requests).toHaveLength(1);
  });
});

describe('diagnose', () => {
  it('asks again with the values of the placeholders the engine found', async () => {
    const outline = [command('query', ['t', 'n'])];
    const { transport, requests } = host((r) => ({ commands: 1, outline, schema_checked: r.parameters !== undefined }));
    const asked: string[][] = [];
    const found = await diagnose(transport, 'FIND(?x) WHERE { ?x {type: :t} } LIMIT :n', (names) => {
      asked.push(names);
      return { t: 'Drug', n: 3 };
    });
    expect(asked).toEqual([['t', 'n']]);
    expect(requests.map((r) => r.parameters)).toEqual([undefined, { t: 'Drug', n: 3 }]);
    expect(found.outline).toEqual(outline);
  });
  it('asks once for a text without placeholders', async () => {
    const { transport, requests } = host(() => ({ commands: 1, outline: [command('meta')] }));
    const found = await diagnose(transport, 'DESCRIBE PRIMER', () => ({}));
    expect(requests).toHaveLength(1);
    expect(found.outline).toEqual([command('meta')]);
  });
  it('has no outline for a text that does not parse', async () => {
    const { transport } = host(() => ({ ok: false, commands: 0 }));
    expect((await diagnose(transport, 'FIND(', () => ({}))).outline).toBeNull();
  });
});
