import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser } from '../support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../support/python-gitlab.ts';

// python-gitlab (3.12) driving labels, milestones and iterations as its users call them. The server's clock
// stands at 2026-06-01.

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'planadmin', admin: true })).token;
});

const py = (script: string) => pythonGitlab(server.url, token, script);

test('python-gitlab: project.labels and group.labels', { skip: pythonSkip }, async () => {
  const out = await py(`
g = gl.groups.create({"name": "Plan", "path": "plan"})
p = gl.projects.create({"name": "planned", "namespace_id": g.id})
l = p.labels.create({"name": "bug", "color": "#FF0000", "priority": 2, "description": "broken"})
out["created"] = [l.name, l.color, l.text_color, l.priority, l.is_project_label, l.subscribed]
l.new_name = "defect"
l.color = "lightyellow"
l.save()
out["saved"] = [l.name, l.color, l.text_color, l.priority]
gl_ = g.labels.create({"name": "group-label", "color": "green"})
out["project_list"] = [[x.name, x.is_project_label] for x in p.labels.list()]
d = p.labels.get("defect")
d.subscribe()
out["subscribed"] = d.subscribed
out["again"] = attempt(lambda: d.subscribe())
d.unsubscribe()
out["unsubscribed"] = d.subscribed
gl_.description = "shared"
gl_.save()
out["group_list"] = [[x.name, x.color, x.description] for x in g.labels.list()]
out["missing"] = attempt(lambda: p.labels.get("nope"))
out["taken"] = attempt(lambda: p.labels.create({"name": "group-label", "color": "#000"}))
p.labels.delete("defect")
g.labels.delete("group-label")
out["left"] = [x.name for x in p.labels.list()]
p.labels.create({"name": "promo", "color": "#abc"})
p.labels.get("promo").promote()
out["promoted"] = [[x.name, x.color] for x in g.labels.list()]
`);
  assert.deepEqual(out, {
    created: ['bug', '#FF0000', '#FFFFFF', 2, true, false],
    saved: ['defect', '#FFFFE0', '#333333', 2],
    project_list: [['defect', true], ['group-label', false]],
    subscribed: true,
    again: [304, ''],
    unsubscribed: false,
    group_list: [['group-label', '#008000', 'shared']],
    missing: [404, '404 Label Not Found'],
    taken: [409, 'Label already exists'],
    left: [],
    promoted: [['promo', '#abc']],
  });
});

test('python-gitlab: project.milestones and group.milestones', { skip: pythonSkip }, async () => {
  const out = await py(`
g = gl.groups.create({"name": "Miles", "path": "miles"})
p = gl.projects.create({"name": "stones", "namespace_id": g.id})
m = p.milestones.create({"title": "v1", "description": "first", "start_date": "2026-05-01", "due_date": "2026-05-31"})
out["created"] = [m.iid, m.title, m.state, m.expired, m.due_date, m.start_date, m.project_id == p.id]
m.state_event = "close"
m.title = "v1.0"
m.save()
out["saved"] = [p.milestones.get(m.id).title, p.milestones.get(m.id).state]
p.milestones.create({"title": "v2"})
out["active"] = [x.title for x in p.milestones.list(state="active")]
out["closed"] = [x.title for x in p.milestones.list(state="closed")]
out["by_iid"] = [x.title for x in p.milestones.list(iids=[m.iid])]
gm = g.milestones.create({"title": "group v1", "due_date": "2026-06-30"})
out["group"] = [[x.title, x.group_id == g.id, x.expired] for x in g.milestones.list()]
out["with_parents"] = [x.title for x in p.milestones.list(include_parent_milestones=True)]
out["clash"] = attempt(lambda: p.milestones.create({"title": "group v1"}))
m.delete()
out["left"] = [x.title for x in p.milestones.list()]
`);
  assert.deepEqual(out, {
    created: [1, 'v1', 'active', true, '2026-05-31', '2026-05-01', true],
    saved: ['v1.0', 'closed'],
    active: ['v2'],
    closed: ['v1.0'],
    by_iid: ['v1.0'],
    group: [['group v1', true, false]],
    with_parents: ['v1.0', 'group v1', 'v2'],
    clash: [400, 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}'],
    left: ['v2'],
  });
});

test('python-gitlab: group.iterations over a cadence made through the extension routes', { skip: pythonSkip }, async () => {
  const out = await py(`
g = gl.groups.create({"name": "Iter", "path": "iter"})
c = gl.http_post("/groups/%d/iteration_cadences" % g.id, post_data={"title": "Weekly", "start_date": "2026-06-01", "duration_in_weeks": 1, "iterations_in_advance": 2})
out["cadence"] = [c["title"], c["automatic"], c["duration_in_weeks"]]
out["all"] = [[i.sequence, i.state, i.start_date, i.due_date] for i in g.iterations.list()]
out["upcoming"] = [i.sequence for i in g.iterations.list(state="upcoming")]
out["current"] = [i.sequence for i in g.iterations.list(state="current")]
out["search"] = [i.sequence for i in g.iterations.list(search="week", **{"in": ["cadence_title"]})]
p = gl.projects.create({"name": "iterated", "namespace_id": g.id})
out["project"] = len(gl.http_list("/projects/%d/iterations" % p.id))
`);
  assert.deepEqual(out, {
    cadence: ['Weekly', true, 1],
    all: [[1, 2, '2026-06-01', '2026-06-07'], [2, 1, '2026-06-08', '2026-06-14'], [3, 1, '2026-06-15', '2026-06-21']],
    upcoming: [2, 3],
    current: [1],
    search: [1, 2, 3],
    project: 3,
  });
});
