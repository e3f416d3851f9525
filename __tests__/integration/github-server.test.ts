// The local GitHub emulation, driven by the real Octokit client (@octokit/core + paginate plugin) the
// action uses. Needs no cluster.
import { Octokit } from '@octokit/core';
import { paginateRest } from '@octokit/plugin-paginate-rest';
import { RequestError } from '@octokit/request-error';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';

const MyOctokit = Octokit.plugin(paginateRest);
type Client = InstanceType<typeof MyOctokit>;

const repo = { owner: 'acme', repo: 'fleet' };
const SHA = 'ce587453ced02b1526dfb4cb910479d431683101';

/** The RequestError a call rejects with (fails the test when it resolves or throws something else). */
async function failure(p: Promise<unknown>): Promise<RequestError> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RequestError);
  return err as RequestError;
}

function annotations(n: number, from = 1) {
  return Array.from({ length: n }, (_, i) => ({
    path: `deploy/app-${from + i}.yaml`,
    start_line: from + i,
    end_line: from + i,
    annotation_level: 'warning' as const,
    message: `finding ${from + i}`,
  }));
}

describe('fake GitHub REST API, driven by Octokit', () => {
  let fake: FakeGitHub;
  let gh: Client;
  let issue = 100;

  beforeAll(async () => {
    fake = await startFakeGitHub({
      tokens: {
        'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' },
        'tok-issues': { issues: 'write' },
        'tok-pr-read': { pull_requests: 'read', checks: 'read' },
        'tok-contents': { contents: 'read' },
      },
    });
    gh = new MyOctokit({ auth: 'tok-rw', baseUrl: fake.url });
  });
  afterAll(async () => {
    await fake.close();
  });
  afterEach(() => {
    issue++;
  });

  it('paginates 250 comments over 3 pages with GitHub Link headers', async () => {
    for (let i = 1; i <= 250; i++) {
      await gh.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...repo,
        issue_number: issue,
        body: `comment ${i}`,
      });
    }
    // Another pull request's comments are not listed.
    await gh.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue + 1000,
      body: 'elsewhere',
    });
    const before = fake.requests.length;
    const all = await gh.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
      per_page: 100,
    });
    expect(all.map((c) => c.body)).toEqual(Array.from({ length: 250 }, (_, i) => `comment ${i + 1}`));
    expect(all[0]!.user).toMatchObject({ login: 'github-actions[bot]', type: 'Bot' });
    const pages = fake.requests.slice(before);
    expect(pages.map((r) => [r.method, r.query, r.status])).toEqual([
      ['GET', '?per_page=100', 200],
      ['GET', '?per_page=100&page=2', 200],
      ['GET', '?per_page=100&page=3', 200],
    ]);

    // The Link header exactly as GitHub writes it: absolute URLs naming the repository by id.
    const first = await gh.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
      per_page: 100,
    });
    const repoPath = /\/repositories\/(\d+)\//.exec(first.headers.link ?? '')?.[0];
    expect(repoPath).toBeDefined();
    const page = (n: number) => `<${fake.url}${repoPath!}issues/${issue}/comments?per_page=100&page=${n}>`;
    expect(first.headers.link).toBe(`${page(2)}; rel="next", ${page(3)}; rel="last"`);
    const second = await gh.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
      per_page: 100,
      page: 2,
    });
    expect(second.headers.link).toBe(
      `${page(1)}; rel="prev", ${page(3)}; rel="next", ${page(3)}; rel="last", ${page(1)}; rel="first"`,
    );
    const third = await gh.request(`GET ${new URL(/<([^>]+)>; rel="next"/.exec(second.headers.link!)![1]!).pathname}`, {
      per_page: 100,
      page: 3,
    });
    expect(third.data).toHaveLength(50);
    expect(third.headers.link).toBe(`${page(2)}; rel="prev", ${page(1)}; rel="first"`);

    // Default page size 30; larger page sizes are capped at 100.
    const dflt = await gh.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
    });
    expect(dflt.data).toHaveLength(30);
    expect(dflt.headers.link).toContain('?page=9>; rel="last"');
    const capped = await gh.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
      per_page: 500,
    });
    expect(capped.data).toHaveLength(100);
  });

  it('updates a comment, and answers 404 for an unknown comment id', async () => {
    const created = await gh.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
      body: 'plan: 3 to create',
    });
    expect(created.status).toBe(201);
    expect(created.headers['x-accepted-github-permissions']).toBe('pull_requests=write; issues=write');
    expect(created.data).toMatchObject({
      body: 'plan: 3 to create',
      url: `${fake.url}/repos/acme/fleet/issues/comments/${created.data.id}`,
      html_url: `https://github.com/acme/fleet/pull/${issue}#issuecomment-${created.data.id}`,
      user: { login: 'github-actions[bot]', type: 'Bot' },
    });
    expect(created.data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(typeof created.data.node_id).toBe('string');

    const updated = await gh.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
      ...repo,
      comment_id: created.data.id,
      body: 'plan: 4 to create',
    });
    expect(updated.status).toBe(200);
    expect(updated.data.id).toBe(created.data.id);
    expect(updated.data.body).toBe('plan: 4 to create');
    expect(fake.comments.find((c) => c.id === created.data.id)).toMatchObject({
      body: 'plan: 4 to create',
      html_url: created.data.html_url,
      owner: 'acme',
      repo: 'fleet',
      issue_number: issue,
    });
    const got = await gh.request('GET /repos/{owner}/{repo}/issues/comments/{comment_id}', {
      ...repo,
      comment_id: created.data.id,
    });
    expect(got.data.body).toBe('plan: 4 to create');

    const missing = await failure(
      gh.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
        ...repo,
        comment_id: 987654321,
        body: 'nope',
      }),
    );
    expect(missing.status).toBe(404);
    expect(missing.response?.data).toEqual({
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest/issues/comments#update-an-issue-comment',
      status: '404',
    });
    // A comment of another repository is not found through this one.
    const other = await failure(
      gh.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
        owner: 'acme',
        repo: 'other',
        comment_id: created.data.id,
        body: 'nope',
      }),
    );
    expect(other.status).toBe(404);
    expect(fake.comments.find((c) => c.id === created.data.id)?.body).toBe('plan: 4 to create');
  });

  it('validates comment bodies the way GitHub does', async () => {
    const post = (body: unknown) =>
      gh.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...repo,
        issue_number: issue,
        body: body as string,
      });
    const tooLong = {
      message: 'Validation Failed',
      errors: [
        {
          resource: 'IssueComment',
          code: 'unprocessable',
          field: 'data',
          message: 'Body is too long (maximum is 65536 characters)',
        },
      ],
      documentation_url: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment',
      status: '422',
    };
    // Exactly 65536 characters, and one more: both accepted. GitHub's message names 65536 characters,
    // but what it enforces is 262,144 UTF-8 bytes.
    expect((await post('a'.repeat(65536))).data.body).toHaveLength(65536);
    expect((await post('a'.repeat(65537))).data.body).toHaveLength(65537);
    expect((await post('a'.repeat(262_144))).status).toBe(201);
    const over = await failure(post('a'.repeat(262_145)));
    expect(over.status).toBe(422);
    expect(over.response?.data).toEqual(tooLong);
    // Bytes, not characters: 65536 four-byte characters fit, one more byte does not.
    expect((await post('🌈'.repeat(65536))).status).toBe(201);
    expect((await failure(post(`${'🌈'.repeat(65536)}a`))).response?.data).toEqual(tooLong);
    expect((await failure(post('—'.repeat(87_382)))).status).toBe(422);

    const blank = await failure(post(''));
    expect(blank.response?.data).toMatchObject({
      message: 'Validation Failed',
      errors: [{ resource: 'IssueComment', code: 'unprocessable', field: 'data', message: 'Body cannot be blank' }],
    });
    const nul = await failure(post(null));
    expect(nul.response?.data).toMatchObject({
      message: "Invalid request.\n\nFor 'properties/body', nil is not a string.",
    });
    const absent = await failure(
      gh.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...repo,
        issue_number: issue,
      } as never),
    );
    expect(absent.status).toBe(422);
    expect(absent.response?.data).toMatchObject({ message: 'Invalid request.\n\n"body" wasn\'t supplied.' });
    // Nothing rejected was stored.
    const stored = fake.comments.filter((c) => c.issue_number === issue).map((c) => c.body.length);
    expect(stored).toEqual([65536, 65537, 262_144, 65536 * 2]);
  });

  it('creates a check run and appends the annotations of updates', async () => {
    const created = await gh.request('POST /repos/{owner}/{repo}/check-runs', {
      ...repo,
      name: 'kustomize-reconcile',
      head_sha: SHA,
      status: 'in_progress',
      details_url: 'https://example.com/run/1',
      external_id: 'run-1',
      output: { title: 'Reconciling', summary: '50 findings so far', annotations: annotations(50) },
    });
    expect(created.status).toBe(201);
    expect(created.headers['x-accepted-github-permissions']).toBe('checks=write');
    const id = created.data.id;
    expect(created.data).toMatchObject({
      name: 'kustomize-reconcile',
      head_sha: SHA,
      status: 'in_progress',
      conclusion: null,
      completed_at: null,
      details_url: 'https://example.com/run/1',
      external_id: 'run-1',
      html_url: `https://github.com/acme/fleet/runs/${id}`,
      url: `${fake.url}/repos/acme/fleet/check-runs/${id}`,
      output: { title: 'Reconciling', summary: '50 findings so far', text: null, annotations_count: 50 },
    });
    expect(created.data.started_at).toMatch(/Z$/);

    const updated = await gh.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
      ...repo,
      check_run_id: id,
      conclusion: 'failure',
      output: { title: 'Reconciled', summary: '80 findings', text: 'details', annotations: annotations(30, 51) },
    });
    expect(updated.status).toBe(200);
    expect(updated.data).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      output: { title: 'Reconciled', summary: '80 findings', text: 'details', annotations_count: 80 },
    });
    expect(updated.data.completed_at).toMatch(/Z$/);
    const run = fake.checkRuns.find((r) => r.id === id)!;
    expect(run.annotations).toHaveLength(80);
    expect(run).toMatchObject({ html_url: created.data.html_url, conclusion: 'failure' });
    expect(run.output.annotations_count).toBe(80);
    expect(run.annotations.map((a) => a.start_line)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
    const listed = await gh.paginate('GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations', {
      ...repo,
      check_run_id: id,
      per_page: 50,
    });
    expect(listed.map((a) => a.message)).toEqual(Array.from({ length: 80 }, (_, i) => `finding ${i + 1}`));
    expect(listed[0]!.blob_href).toBe(`https://github.com/acme/fleet/blob/${SHA}/deploy/app-1.yaml`);

    // 51 in one request: refused, and nothing is appended.
    const tooMany = await failure(
      gh.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
        ...repo,
        check_run_id: id,
        output: { summary: 'more', annotations: annotations(51, 81) },
      }),
    );
    expect(tooMany.status).toBe(422);
    expect(tooMany.response?.data).toEqual({
      message: 'Invalid request.\n\nNo more than 50 items are allowed; 51 were supplied.',
      documentation_url: 'https://docs.github.com/rest/checks/runs#update-a-check-run',
      status: '422',
    });
    const createTooMany = await failure(
      gh.request('POST /repos/{owner}/{repo}/check-runs', {
        ...repo,
        name: 'x',
        head_sha: SHA,
        output: { title: 't', summary: 's', annotations: annotations(51) },
      }),
    );
    expect(createTooMany.status).toBe(422);
    expect(run.annotations).toHaveLength(80);
    expect(fake.checkRuns.filter((r) => r.name === 'x')).toEqual([]);
  });

  it('validates check runs the way GitHub does', async () => {
    const create = (body: Record<string, unknown>) =>
      gh.request('POST /repos/{owner}/{repo}/check-runs', { ...repo, ...body } as never);
    const message = async (body: Record<string, unknown>) => {
      const err = await failure(create(body));
      expect(err.status).toBe(422);
      return (err.response?.data as { message: string }).message;
    };
    const ok = { name: 'c', head_sha: SHA };
    const count = fake.checkRuns.length;

    expect(await message({ head_sha: SHA })).toBe('Invalid request.\n\n"name" wasn\'t supplied.');
    expect(await message({})).toBe('Invalid request.\n\n"head_sha", "name" weren\'t supplied.');
    expect(await message({ ...ok, status: 'completed' })).toContain('"conclusion" wasn\'t supplied.');
    expect(await message({ ...ok, status: 'in_progress', conclusion: 'success' })).toBe('Validation Failed');
    expect(await message({ ...ok, status: 'done' })).toBe(
      `Invalid request.\n\nFor 'properties/status', "done" is not a member of ["queued", "in_progress", "completed"].`,
    );
    expect(
      await message({
        ...ok,
        output: {
          title: 't',
          summary: 's',
          annotations: [
            { path: 'a.yaml', start_line: 1, end_line: 1, annotation_level: 'warning', message: 'm' },
            { path: 'a.yaml', message: 'm' },
          ],
        },
      }),
    ).toBe('Invalid request.\n\n"annotation_level", "end_line", "start_line" weren\'t supplied.');
    expect(
      await message({
        ...ok,
        output: {
          title: 't',
          summary: 's',
          annotations: [{ path: 'a.yaml', start_line: 1, end_line: 1, annotation_level: 'error', message: 'm' }],
        },
      }),
    ).toContain(`"error" is not a member of ["notice", "warning", "failure"]`);
    expect(await message({ ...ok, output: { summary: 's' } })).toBe('Invalid request.\n\n"title" wasn\'t supplied.');

    // output.summary and output.text: 65535 characters, and 65535 bytes.
    expect(await message({ ...ok, output: { title: 't', summary: 'a'.repeat(65536) } })).toBe(
      'Invalid request.\n\nOnly 65535 characters are allowed; 65536 were supplied.',
    );
    expect(await message({ ...ok, output: { title: 't', summary: 's', text: 'a'.repeat(70000) } })).toBe(
      'Invalid request.\n\nOnly 65535 characters are allowed; 70000 were supplied.',
    );
    const bytes = await failure(create({ ...ok, output: { title: 't', summary: 'é'.repeat(40000) } }));
    expect(bytes.response?.data).toMatchObject({
      message: 'Validation Failed',
      errors: [
        {
          resource: 'CheckRun',
          code: 'custom',
          field: 'summary',
          message: 'summary exceeds a maximum bytesize of 65535',
        },
      ],
    });
    expect(fake.checkRuns).toHaveLength(count);

    // At the limits: accepted.
    const edge = await create({ ...ok, conclusion: 'success', output: { title: 't', summary: 'a'.repeat(65535) } });
    expect(edge.status).toBe(201);
    expect(edge.data).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(fake.checkRuns).toHaveLength(count + 1);
  });

  it('answers 403 with x-accepted-github-permissions when the token lacks the permission', async () => {
    const noPerms = new MyOctokit({ auth: 'tok-contents', baseUrl: fake.url });
    const check = await failure(
      noPerms.request('POST /repos/{owner}/{repo}/check-runs', { ...repo, name: 'c', head_sha: SHA }),
    );
    expect(check.status).toBe(403);
    expect(check.response?.headers['x-accepted-github-permissions']).toBe('checks=write');
    expect(check.response?.data).toEqual({
      message: 'Resource not accessible by integration',
      documentation_url: 'https://docs.github.com/rest/checks/runs#create-a-check-run',
      status: '403',
    });
    const comment = await failure(
      noPerms.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...repo,
        issue_number: issue,
        body: 'hi',
      }),
    );
    expect(comment.status).toBe(403);
    expect(comment.response?.headers['x-accepted-github-permissions']).toBe('pull_requests=write; issues=write');

    // Read access lists but cannot write; issues: write is enough to comment.
    const reader = new MyOctokit({ auth: 'tok-pr-read', baseUrl: fake.url });
    const list = await reader.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
    });
    expect(list.headers['x-accepted-github-permissions']).toBe('pull_requests=read; issues=read');
    expect(
      (await failure(reader.request('POST /repos/{owner}/{repo}/check-runs', { ...repo, name: 'c', head_sha: SHA })))
        .status,
    ).toBe(403);
    const issues = new MyOctokit({ auth: 'tok-issues', baseUrl: fake.url });
    const posted = await issues.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
      body: 'via issues: write',
    });
    expect(posted.status).toBe(201);
    expect(fake.comments.filter((c) => c.issue_number === issue).map((c) => c.body)).toEqual(['via issues: write']);
  });

  it('answers 401 Bad credentials for an unknown token, and GitHub headers on every response', async () => {
    const stranger = new MyOctokit({ auth: 'tok-nope', baseUrl: fake.url });
    const err = await failure(
      stranger.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...repo, issue_number: issue }),
    );
    expect(err.status).toBe(401);
    expect(err.response?.data).toMatchObject({ message: 'Bad credentials', status: '401' });
    expect(err.response?.headers['x-github-request-id']).toMatch(/^[0-9A-F]+(:[0-9A-F]+){4}$/);

    const ok = await gh.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
    });
    expect(ok.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(ok.headers['x-ratelimit-limit'])).toBe(5000);
    expect(Number(ok.headers['x-ratelimit-remaining'])).toBeLessThan(5000);
    expect(Number(ok.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    expect(ok.headers['x-github-request-id']).not.toBe(err.response?.headers['x-github-request-id']);

    const unknown = await failure(gh.request('GET /repos/{owner}/{repo}/branches', repo));
    expect(unknown.status).toBe(404);
    expect(unknown.response?.data).toMatchObject({ message: 'Not Found', status: '404' });
  });

  it('fails the next matching request once with failNext', async () => {
    fake.failNext('POST', /\/issues\/\d+\/comments$/, 502, 'Server Error');
    const before = fake.requests.length;
    const err = await failure(
      gh.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...repo,
        issue_number: issue,
        body: 'x',
      }),
    );
    expect(err.status).toBe(502);
    expect(err.response?.data).toMatchObject({ message: 'Server Error', status: '502' });
    expect(fake.comments.filter((c) => c.issue_number === issue)).toEqual([]);
    const retry = await gh.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repo,
      issue_number: issue,
      body: 'x',
    });
    expect(retry.status).toBe(201);
    expect(fake.requests.slice(before).map((r) => [r.method, r.path, r.status])).toEqual([
      ['POST', `/repos/acme/fleet/issues/${issue}/comments`, 502],
      ['POST', `/repos/acme/fleet/issues/${issue}/comments`, 201],
    ]);
  });
});
