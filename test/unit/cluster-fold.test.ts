import { clusterIncrement, clusterRow, planFold } from '../../src/memory/cluster-fold.js';

/** The fold rule both runtimes write by (src/memory/cluster-fold.ts). */
describe('planFold', () => {
  const cluster = { id: 'clu_1', action: 'none' };

  it('makes a new cluster when the target does not exist, holding the event counts', () => {
    const plan = planFold({ down: 1, dismissed: 1 }, [], null, false);
    expect(plan).toEqual({
      counts: { up: 0, down: 1, dismissed: 1, addressed: 0 },
      cluster: 'create',
      joins: true,
      suppressNow: false,
    });
    const made = {
      repo: 'acme/web',
      label: 'L',
      exemplar: { title: 'T', body: 'B', category: null, path: 'a.ts' },
    };
    expect(clusterRow('clu_9', made, plan, 5)).toMatchObject({
      id: 'clu_9',
      action: 'none',
      size: 1,
      feedback_down: 1,
      feedback_dismissed: 1,
      revision: 1,
    });
    expect(clusterRow('clu_9', made, planFold({}, [], null, true), 5).action).toBe('suppress');
  });

  it('counts a finding dismissed and addressed once, however many events say so', () => {
    const earlier = [{ dismissed: 1, addressed: 0, cluster_id: 'clu_1' }];
    const plan = planFold({ down: 5, dismissed: 1, addressed: 1 }, earlier, cluster, false);
    expect(plan.counts).toEqual({ up: 0, down: 1, dismissed: 0, addressed: 1 });
    expect(plan.joins).toBe(false);
    expect(plan.cluster).toBe('update');
  });

  it('keeps the cluster unchanged when the finding is in it and the event counts nothing new', () => {
    const earlier = [{ dismissed: 1, addressed: 0, cluster_id: 'clu_1' }];
    expect(planFold({ dismissed: 1 }, earlier, cluster, false).cluster).toBe('keep');
    expect(planFold({ dismissed: 1 }, earlier, { id: 'clu_1', action: 'suppress' }, true).cluster).toBe(
      'keep',
    );
  });

  it('grows the size when the finding joins, and suppresses once', () => {
    const plan = planFold({}, [{ dismissed: 0, addressed: 0, cluster_id: 'clu_0' }], cluster, true);
    expect(plan).toMatchObject({ cluster: 'update', joins: true, suppressNow: true });
    const { sql, bindings } = clusterIncrement('clu_1', plan, 7);
    expect(sql).toMatch(/size = size \+ \?/);
    expect(bindings).toEqual([0, 0, 0, 0, 1, 1, 7, 'clu_1']);
  });
});
