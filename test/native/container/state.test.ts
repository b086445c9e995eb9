import { ContainerState } from '../../../src/native/container/state.js';
import { REPO, seedBundle } from './fakes.js';

/** The container's in-memory state: hydrated from a bundle, its changes counted from the last flush. */
describe('native container state', () => {
  it('sends back changed rows by key, nothing untouched, and counts from the last flush', async () => {
    const { bundle, run } = await seedBundle();
    const state = await ContainerState.open(604800);
    try {
      await state.hydrate(bundle);
      expect(await state.store.runs.get(run.id)).toMatchObject({ id: run.id, status: 'queued' });
      expect((await state.changes()).tables).toEqual({});

      await state.store.repositories.configure(REPO, { enabled: false }, { actor: 'test', reason: null });
      const first = await state.changes();
      expect(Object.keys(first.tables)).toEqual(['repositories']);
      expect(first.tables.repositories!.insert).toEqual([]);
      expect(first.tables.repositories!.upsert).toEqual([expect.objectContaining({ full_name: REPO })]);
      // The audit row configure wrote is in no table of the contract: named, never flushed.
      expect(await state.outsideContract()).toEqual(['audit_events']);

      state.flushed(first.current);
      expect((await state.changes()).tables).toEqual({});
    } finally {
      await state.close();
    }
  });

  it('refuses a bundle naming a table outside the contract', async () => {
    const state = await ContainerState.open(604800);
    try {
      await expect(state.hydrate({ tables: { api_keys: [] } })).rejects.toThrow(
        'state bundle names tables outside the contract: api_keys',
      );
    } finally {
      await state.close();
    }
  });
});
