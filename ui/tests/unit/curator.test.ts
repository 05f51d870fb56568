// Issue 15's pure pieces: label placement, edge-label density, framing in
// the free part of the view, the change diff, and history times.
import { describe, expect, it } from 'vitest';
import { edgeLabelsByDefault, frameBox, labelPriority, labelRoom, MAX_LABEL_ROOM, placeLabels, showEdgeLabel, type LabelCandidate } from '../../src/lib/graph/labels';
import { changesOf, describeElement, diffRows, showValue, summariseChanges } from '../../src/lib/changes';
import { historyTime } from '../../src/lib/history';
import { zoneName } from '../../src/lib/time';
import type { ElementChange } from '../../src/transport/generated/kip-api';

const cand = (id: string, x: number, y: number, priority: number, width = 80): LabelCandidate => ({ id, x, y, r: 5, width, height: 16, priority });
const overlap = (a: { x: number; y: number; w: number; h: number }, b: typeof a) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

describe('label placement', () => {
  it('never overlaps two labels, and moves a label to a free side', () => {
    // Mefenamic Acid and Ibuprofen side by side: the second label goes left.
    const placed = placeLabels([cand('mefenamic', 100, 100, 1, 110), cand('ibuprofen', 190, 100, 2)], { width: 400, height: 300 });
    expect(placed.map((p) => p.id).sort()).toEqual(['ibuprofen', 'mefenamic']);
    expect(overlap(placed[0].box, placed[1].box)).toBe(false);
  });

  it('places higher priority first: the selected label wins a contested spot', () => {
    const sel = labelPriority({ selected: true, degree: 0, size: 5 });
    const hub = labelPriority({ degree: 40, size: 15 });
    expect(sel).toBeGreaterThan(hub);
    expect(labelPriority({ hovered: true, degree: 0, size: 5 })).toBeGreaterThan(hub);
    expect(labelPriority({ fresh: true, degree: 0, size: 5 })).toBeGreaterThan(hub);
    // Four nodes on one spot: only so many labels fit; the selected one is among them.
    const crowd = [cand('a', 100, 100, hub), cand('b', 100, 100, hub), cand('c', 100, 100, hub), cand('d', 100, 100, hub), cand('s', 100, 100, sel)];
    const placed = placeLabels(crowd, { width: 400, height: 300 });
    expect(placed[0].id).toBe('s');
    expect(placed.length).toBeLessThan(5);
  });

  it('keeps labels off the floating panels and off other nodes', () => {
    const legend = { x: 0, y: 0, w: 150, h: 300 };
    const [p] = placeLabels([cand('n', 160, 100, 1)], { width: 400, height: 300 }, [legend]);
    expect(overlap(p.box, legend)).toBe(false);
    // A node whose every label spot is under the panel gets none.
    expect(placeLabels([cand('hidden', 100, 100, 1)], { width: 400, height: 300 }, [legend])).toEqual([]);
    const node = { x: 150, y: 90, w: 20, h: 20 };
    const [q] = placeLabels([cand('m', 140, 100, 1, 30)], { width: 400, height: 300 }, [], 300, [node]);
    expect(overlap(q.box, node)).toBe(false);
  });
});

describe('edge labels', () => {
  it('are shown by default only while links are sparse, and per predicate on or off', () => {
    expect(edgeLabelsByDefault(30, 1200, 800)).toBe(true);
    expect(edgeLabelsByDefault(2000, 1200, 800)).toBe(false);
    expect(showEdgeLabel('auto', false)).toBe(true);
    expect(showEdgeLabel('auto', true)).toBe(false);
    expect(showEdgeLabel('on', true)).toBe(true);
    expect(showEdgeLabel('off', false)).toBe(false);
  });
});

describe('framing', () => {
  it('leaves room right of a wide box for its rightmost label', () => {
    const insets = { top: 0, right: 0, bottom: 0, left: 0 };
    const view = { width: 1000, height: 800 };
    // A wide box: its width decides the scale.
    const box = { minX: -100, maxX: 100, minY: -1, maxY: 1 };
    const right = labelRoom(120, 6);
    expect(right).toBe(132);
    const cam = frameBox(box, view, insets, 40, 60, right);
    const px = (x: number) => (x - cam.x) * cam.scale + view.width / 2;
    // The rightmost node and its label end inside the view, with the pad.
    expect(px(box.maxX) + right).toBeLessThanOrEqual(view.width - 40 + 1e-6);
    expect(px(box.minX)).toBeGreaterThanOrEqual(40 - 1e-6);
    // Without the room, the label would have run past the edge.
    const bare = frameBox(box, view, insets, 40, 60);
    expect((box.maxX - bare.x) * bare.scale + view.width / 2 + right).toBeGreaterThan(view.width);
    expect(labelRoom(0, 6)).toBe(0);
    expect(labelRoom(5000, 6)).toBe(MAX_LABEL_ROOM);
  });

  it('centres the box in the part of the view the panels leave free', () => {
    const insets = { top: 60, right: 0, bottom: 0, left: 260 };
    const cam = frameBox({ minX: -10, maxX: 10, minY: -10, maxY: 10 }, { width: 1000, height: 800 }, insets);
    // Screen position of the box's centre (the canvas renderer's projection).
    const sx = (0 - cam.x) * cam.scale + 500;
    const sy = -(0 - cam.y) * cam.scale + 400;
    expect(sx).toBeCloseTo(260 + (1000 - 260) / 2);
    expect(sy).toBeCloseTo(60 + (800 - 60) / 2);
    // Both corners land inside the free area.
    for (const [x, y] of [[-10, -10], [10, 10]]) {
      const px = (x - cam.x) * cam.scale + 500;
      const py = -(y - cam.y) * cam.scale + 400;
      expect(px).toBeGreaterThanOrEqual(260);
      expect(py).toBeGreaterThanOrEqual(60);
      expect(px).toBeLessThanOrEqual(1000);
      expect(py).toBeLessThanOrEqual(800);
    }
  });
});

const created: ElementChange = { op: 'created', kind: 'concept', id: 'C:9', type: 'Drug', name: 'Naproxen', after: { attributes: { risk_level: 2 }, metadata: { _created_at: 't', _updated_at: 't', source: 'x' } } };
const updated: ElementChange = {
  op: 'updated', kind: 'concept', id: 'C:1', type: 'Drug', name: 'Aspirin',
  before: { attributes: { risk_level: 2, formula: 'C9H8O4', old: 1 }, metadata: { _updated_at: 'a' } },
  after: { attributes: { risk_level: 3, formula: 'C9H8O4', tags: ['a', 'b'] }, metadata: { _updated_at: 'b' } },
};
const link: ElementChange = { op: 'created', kind: 'proposition', id: 'P:3', predicate: 'treats', subject: { id: 'C:9', type: 'Drug', name: 'Naproxen' }, object: { id: 'C:2', type: 'Symptom', name: 'Headache' }, after: { attributes: {}, metadata: {} } };

describe('the change diff', () => {
  it('reads the changes of one command or of each command of a text', () => {
    expect(changesOf({ changes: [created] } as never)).toEqual([created]);
    expect(changesOf([{ result: { changes: [created] } }, { result: { changes: [link] } }] as never)).toEqual([created, link]);
    expect(changesOf({ blocks: 1 } as never)).toEqual([]);
  });

  it('summarises by operation and kind', () => {
    expect(summariseChanges([created, link, updated])).toBe('creates 1 concept and 1 link, changes 1 concept');
    expect(summariseChanges([])).toBe('changes nothing');
  });

  it('names elements and links by their names', () => {
    expect(describeElement(created)).toBe('Drug “Naproxen”');
    expect(describeElement(link)).toBe('Naproxen —treats→ Headache');
  });

  it('lists only what differs, before → after, without the engine timestamps', () => {
    expect(diffRows(updated.before, updated.after)).toEqual([
      { section: 'attributes', key: 'risk_level', before: 2, after: 3, change: 'changed' },
      { section: 'attributes', key: 'old', before: 1, after: undefined, change: 'removed' },
      { section: 'attributes', key: 'tags', before: undefined, after: ['a', 'b'], change: 'added' },
    ]);
    expect(diffRows(undefined, created.after).map((r) => r.key)).toEqual(['risk_level', 'source']);
    expect(showValue(['a', 'b'])).toBe('a, b');
    expect(showValue(undefined)).toBe('—');
  });
});

describe('history times', () => {
  it('say when, briefly', () => {
    const now = new Date(2026, 4, 10, 15, 0);
    // With the time zone, as every time the UI shows (issue 33 §9).
    const zone = (d: Date) => zoneName(d);
    const today = new Date(2026, 4, 10, 9, 5);
    const yesterday = new Date(2026, 4, 9, 23, 59);
    const earlier = new Date(2026, 0, 2, 8, 0);
    expect(historyTime(today.toISOString(), now)).toBe(`09:05 ${zone(today)}`);
    expect(historyTime(yesterday.toISOString(), now)).toBe(`yesterday 23:59 ${zone(yesterday)}`);
    expect(historyTime(earlier.toISOString(), now)).toBe(`2026-01-02 08:00 ${zone(earlier)}`);
    expect(historyTime('nonsense', now)).toBe('');
  });
});
