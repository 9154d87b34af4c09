import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { mergedParams } from '../../http/route.ts';
import { Bool, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { ParamError } from '../../platform/errors.ts';
import {
  assertMayManage, createLabel, promoteLabel, deleteLabel, findLabel, groupLabelScope, labelExtras, labelListQuery, projectLabelScope,
  setLabelSubscription, updateLabel, type LabelRow, type LabelScope,
} from './labels.service.ts';
import { label, projectLabel } from './labels.presenter.ts';
import { Label, ProjectLabel } from './labels.schemas.ts';

const tags = ['labels'];

// The same routes on projects and groups. On a project a label is its own or its group's (and, where the reference
// reads with `include_ancestor_groups`, its ancestors'); priorities are the project's.

type Kind = 'project' | 'group';

async function scopeOf(req: ApiRequest<any>, kind: Kind, includeAncestors: boolean, includeDescendants = false): Promise<LabelScope> {
  return kind === 'project'
    ? projectLabelScope(req.server.db, req.project.project, includeAncestors)
    : groupLabelScope(req.server.db, req.group.group, { includeAncestors, includeDescendants });
}

async function present(req: ApiRequest<any>, kind: Kind, rows: LabelRow[], withCounts = false) {
  const projectId = kind === 'project' ? req.project.project.id : null;
  const x = await labelExtras(req.server, req.actor, rows, { projectId, withCounts });
  return rows.map((l) => (kind === 'project' ? projectLabel(l, x) : label(l, x)));
}

/** The label an update or deletion names: by `:label_id` in the path, or `label_id` / `name` in the parameters. */
async function target(req: ApiRequest<any>, kind: Kind): Promise<LabelRow> {
  const i = req.input;
  let key: string | undefined = i.label_id !== undefined ? String(i.label_id) : undefined;
  if (!req.params || (req.params as Record<string, unknown>).label_id === undefined) {
    const given = ['label_id', 'name'].filter((k) => i[k] !== undefined);
    if (given.length > 1) throw ParamError.group(['label_id', 'name'], 'mutually_exclusive');
    if (given.length === 0) throw ParamError.group(['label_id', 'name'], 'exactly_one');
    key = i.label_id !== undefined ? String(i.label_id) : i.name;
  }
  return findLabel(req.server.db, await scopeOf(req, kind, false), key!);
}

function routesFor(kind: Kind): RouteDef<any>[] {
  const base = kind === 'project' ? '/projects/:id/labels' : '/groups/:id/labels';
  const owner = kind === 'project' ? 'project' : 'group';
  const read = kind === 'project' ? { project: { ability: 'read_label' as const } } : { group: { ability: 'read_label' as const } };
  const admin = kind === 'project' ? { project: { ability: 'admin_label' as const } } : { group: { ability: 'admin_label' as const } };
  const entity = kind === 'project' ? ProjectLabel : Label;
  const updateFields = {
    new_name: Opt(Str()), color: Opt(Str()), description: Opt(Str()),
    ...(kind === 'project' ? { priority: Opt(Int()) } : {}),
  };
  const updatable = kind === 'project' ? ['new_name', 'color', 'description', 'priority'] : ['new_name', 'color', 'description'];

  const update = async (req: ApiRequest<any>) => {
    const raw = mergedParams(req);
    const priorityGiven = kind === 'project' && Object.prototype.hasOwnProperty.call(raw, 'priority');
    if (!updatable.some((k) => req.input[k] !== undefined || (k === 'priority' && priorityGiven))) throw ParamError.group(updatable, 'at_least_one');
    const found = await target(req, kind);
    const i = req.input;
    if (i.new_name !== undefined || i.color !== undefined || i.description !== undefined) await assertMayManage(req.server, req.actor, found);
    const row = await updateLabel(req.server, found, {
      title: i.new_name, color: i.color, description: i.description,
      ...(priorityGiven ? { priority: i.priority ?? null, projectId: req.project.project.id } : {}),
    });
    return (await present(req, kind, [row]))[0];
  };
  const remove = async (req: ApiRequest<any>) => {
    const found = await target(req, kind);
    await assertMayManage(req.server, req.actor, found);
    checkUnmodifiedSince(req, found.updated_at);
    await deleteLabel(req.server, found);
    return undefined;
  };
  const subscription = (on: boolean) => async (req: ApiRequest<any>, reply: any) => {
    const found = await findLabel(req.server.db, await scopeOf(req, kind, true), String(req.input.label_id));
    const changed = await setLabelSubscription(req.server, found, req.actor.user!.id, kind === 'project' ? req.project.project.id : null, on);
    if (!changed) return reply.code(304).send();
    const x = await labelExtras(req.server, req.actor, [found], { projectId: kind === 'project' ? req.project.project.id : null, withCounts: false });
    return label(found, x);
  };

  return [
    {
      method: 'GET', url: base, summary: `List the labels of a ${owner}`, tags, access: 'authenticated', ...read,
      response: Type.Array(entity),
      input: Input({
        id: IdOrPath(), with_counts: Opt(Bool({ default: false })), include_ancestor_groups: Opt(Bool({ default: true })),
        ...(kind === 'group' ? { include_descendant_groups: Opt(Bool({ default: false })) } : {}),
        search: Opt(Str()), ...PaginationParams,
      }),
      handler: async (req, reply) => {
        const scope = await scopeOf(req, kind, req.input.include_ancestor_groups, req.input.include_descendant_groups);
        const rows = await paginateQuery(req, reply, labelListQuery(req.server.db, scope, req.input.search));
        return present(req, kind, rows, req.input.with_counts);
      },
    },
    {
      method: 'GET', url: `${base}/:label_id`, summary: `One label of a ${owner}, by id or name`, tags, access: 'authenticated', ...read,
      response: entity,
      input: Input({ id: IdOrPath(), label_id: Str(), include_ancestor_groups: Opt(Bool({ default: true })) }),
      handler: async (req) => {
        const found = await findLabel(req.server.db, await scopeOf(req, kind, req.input.include_ancestor_groups), req.input.label_id);
        return (await present(req, kind, [found]))[0];
      },
    },
    {
      method: 'POST', url: base, summary: `Create a label of a ${owner}`, tags, access: 'authenticated', ...admin,
      response: entity,
      input: Input({ id: IdOrPath(), name: Str(), color: Str(), description: Opt(Str()), ...(kind === 'project' ? { priority: Opt(Int()) } : {}) }),
      handler: async (req) => {
        const i = req.input;
        const ownerId = kind === 'project' ? { projectId: req.project.project.id } : { groupId: req.group.group.id };
        const row = await createLabel(req.server, ownerId, await scopeOf(req, kind, true), { title: i.name, color: i.color, description: i.description, priority: i.priority });
        return (await present(req, kind, [row]))[0];
      },
    },
    {
      method: 'PUT', url: base, summary: 'Update a label named by `label_id` or `name` (the older form)', tags, access: 'authenticated', ...admin,
      response: entity,
      input: Input({ id: IdOrPath(), label_id: Opt(Int()), name: Opt(Str()), ...updateFields }),
      handler: update,
    },
    {
      method: 'PUT', url: `${base}/:label_id`, summary: 'Update a label, by id or name', tags, access: 'authenticated', ...admin,
      response: entity,
      input: Input({ id: IdOrPath(), label_id: Str(), ...updateFields }),
      handler: update,
    },
    {
      method: 'DELETE', url: base, summary: 'Delete a label named by `label_id` or `name` (the older form)', tags, access: 'authenticated', ...admin,
      response: null,
      input: Input({ id: IdOrPath(), label_id: Opt(Int()), name: Opt(Str()) }),
      handler: remove,
    },
    {
      method: 'DELETE', url: `${base}/:label_id`, summary: 'Delete a label, by id or name', tags, access: 'authenticated', ...admin,
      response: null,
      input: Input({ id: IdOrPath(), label_id: Str() }),
      handler: remove,
    },
    {
      method: 'POST', url: `${base}/:label_id/subscribe`, summary: 'Subscribe to a label (304 when already subscribed)', tags, access: 'authenticated', ...read,
      response: Label,
      input: Input({ id: IdOrPath(), label_id: Str() }),
      handler: subscription(true),
    },
    {
      method: 'POST', url: `${base}/:label_id/unsubscribe`, summary: 'Unsubscribe from a label (304 when not subscribed)', tags, access: 'authenticated', ...read,
      response: Label,
      input: Input({ id: IdOrPath(), label_id: Str() }),
      handler: subscription(false),
    },
  ];
}

/** `PUT /projects/:id/labels/:label_id/promote`, and the older form naming the label by `name`. */
async function promote(req: ApiRequest<any>) {
  const key = req.input.label_id ?? req.input.name;
  const found = await findLabel(req.server.db, await scopeOf(req, 'project', false), key);
  const row = await promoteLabel(req.server, req.actor, req.project.project, found);
  const x = await labelExtras(req.server, req.actor, [row], { projectId: null, withCounts: false });
  return label(row, x);
}

const promoteRoutes: RouteDef<any>[] = [
  {
    method: 'PUT', url: '/projects/:id/labels/promote', summary: 'Promote a project label, named by `name`, to a group label (the older form)', tags,
    access: 'authenticated', project: { ability: 'admin_label' },
    response: Label, input: Input({ id: IdOrPath(), name: Str() }),
    handler: promote,
  },
  {
    method: 'PUT', url: '/projects/:id/labels/:label_id/promote', summary: "Promote a project label to a label of the project's group", tags,
    access: 'authenticated', project: { ability: 'admin_label' },
    response: Label, input: Input({ id: IdOrPath(), label_id: Str() }),
    handler: promote,
  },
];

export const labelRoutes: RouteDef<any>[] = [...promoteRoutes, ...routesFor('project'), ...routesFor('group')];
