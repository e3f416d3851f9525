import { describe, expect, it } from 'vitest';
import { healthTable, type HealthResult } from '../../src/kstatus/wait.js';

describe('healthTable', () => {
  it.each<{ why: string; results: HealthResult[]; want: string[] }>([
    {
      why: 'aligned columns, unhealthy first, first line of a message only',
      results: [
        { subject: 'Deployment/ns/web', status: 'Current', message: 'Deployment is available. Replicas: 1' },
        { subject: 'Job/ns/migrate', status: 'Failed', message: 'Job Failed. failed: 1/1\nmore' },
        { subject: 'Widget/ns/w', status: 'InProgress', message: '' },
      ],
      want: [
        'OBJECT             STATUS      MESSAGE',
        'Job/ns/migrate     Failed      Job Failed. failed: 1/1',
        'Widget/ns/w        InProgress',
        'Deployment/ns/web  Current     Deployment is available. Replicas: 1',
      ],
    },
    { why: 'nothing to show', results: [], want: ['OBJECT  STATUS  MESSAGE'] },
  ])('$why', ({ results, want }) => {
    expect(healthTable(results)).toEqual(want);
  });
});
