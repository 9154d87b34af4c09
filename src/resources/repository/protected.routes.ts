import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import type { Db } from '../../platform/db/index.ts';
import { Bool, IdOrPath, Input, IntEnum, Opt, PaginationParams, Str } from '../../http/schemas.ts';

import { paginateArray } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { loadBranchRules, loadTagRules, type BranchRule, type TagRule } from './protection.ts';
import {
  ACCESS_LEVEL_VALUES, createProtectedBranch, createProtectedTag, deleteProtectedBranch, deleteProtectedTag, entriesFrom,
  branchEntryNames, findProtectedBranch, findProtectedTag, protectedBranchUpdatedAt, tagEntryNames,
} from './protected.service.ts';
import { protectedBranchEntity, protectedTagEntity } from './repository.presenter.ts';
import { ProtectedBranch, ProtectedTag } from './repository.schemas.ts';

const Level = () => IntEnum(ACCESS_LEVEL_VALUES);
const Entry = Type.Object({
  access_level: Opt(Level()),
  user_id: Opt(Type.Integer()),
  group_id: Opt(Type.Integer()),
  deploy_key_id: Opt(Type.Integer()),
}, { additionalProperties: true });
const Entries = () => Opt(Type.Array(Entry));

async function presentBranches(db: Db, rules: BranchRule[]) {
  const names = await branchEntryNames(db, rules);
  return rules.map((r) => protectedBranchEntity(r, names));
}

async function presentTags(db: Db, rules: TagRule[]) {
  const names = await tagEntryNames(db, rules);
  return rules.map((r) => protectedTagEntity(r, names));
}

export const protectedBranchRoutes: RouteDef<any>[] = [
  {
    method: 'GET',
    url: '/projects/:id/protected_branches',
    summary: 'List protected branches',
    tags: ['protected_branches'],
    response: Type.Array(ProtectedBranch),
    access: 'authenticated', project: { ability: 'admin_project' },
    input: Input({ id: IdOrPath(), search: Opt(Str()), ...PaginationParams }),
    async handler(req, reply) {
      const ctx = req.project;
      let rules = await loadBranchRules(req.server.db, ctx.project.id);
      if (req.input.search) rules = rules.filter((r) => r.name.toLowerCase().includes(String(req.input.search).toLowerCase()));
      return presentBranches(req.server.db, paginateArray(req, reply, rules));
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/protected_branches/:name',
    summary: 'Get a protected branch or wildcard by its exact name',
    tags: ['protected_branches'],
    response: ProtectedBranch,
    access: 'authenticated', project: { ability: 'admin_project' },
    input: Input({ id: IdOrPath(), name: Str() }),
    async handler(req) {
      const ctx = req.project;
      const rule = await findProtectedBranch(req.server.db, ctx.project.id, req.input.name);
      return (await presentBranches(req.server.db, [rule]))[0];
    },
  },
  {
    method: 'POST',
    url: '/projects/:id/protected_branches',
    summary: 'Protect a branch or wildcard',
    tags: ['protected_branches'],
    response: ProtectedBranch,
    access: 'authenticated', project: { ability: 'admin_project' },
    input: Input({
      id: IdOrPath(),
      name: Str(),
      push_access_level: Opt(Level()),
      merge_access_level: Opt(Level()),
      unprotect_access_level: Opt(Level()),
      allow_force_push: Opt(Bool({ default: false })),
      allowed_to_push: Entries(),
      allowed_to_merge: Entries(),
      allowed_to_unprotect: Entries(),
      code_owner_approval_required: Opt(Bool({ default: false })),
    }),
    async handler(req) {
      const ctx = req.project;
      const i = req.input;
      const rule = await createProtectedBranch(req.server, ctx.project.id, {
        name: i.name,
        allow_force_push: !!i.allow_force_push,
        code_owner_approval_required: !!i.code_owner_approval_required,
        push: entriesFrom(i.push_access_level, i.allowed_to_push, 40),
        merge: entriesFrom(i.merge_access_level, i.allowed_to_merge, 40),
        unprotect: entriesFrom(i.unprotect_access_level, i.allowed_to_unprotect, 40),
      });
      return (await presentBranches(req.server.db, [rule]))[0];
    },
  },
  {
    method: 'DELETE',
    url: '/projects/:id/protected_branches/:name',
    summary: 'Unprotect a branch or wildcard',
    tags: ['protected_branches'],
    response: null,
    access: 'authenticated', project: { ability: 'admin_project' },
    input: Input({ id: IdOrPath(), name: Str() }),
    async handler(req) {
      const ctx = req.project;
      const rule = await findProtectedBranch(req.server.db, ctx.project.id, req.input.name);
      checkUnmodifiedSince(req, await protectedBranchUpdatedAt(req.server.db, rule.id));
      await deleteProtectedBranch(req.server.db, rule.id, ctx.project.id);
      return undefined;
    },
  },
];

export const protectedTagRoutes: RouteDef<any>[] = [
  {
    method: 'GET',
    url: '/projects/:id/protected_tags',
    summary: 'List protected tags',
    tags: ['protected_tags'],
    response: Type.Array(ProtectedTag),
    access: 'authenticated', project: { ability: 'read_protected_branch' },
    input: Input({ id: IdOrPath(), ...PaginationParams }),
    async handler(req, reply) {
      const ctx = req.project;
      const rules = await loadTagRules(req.server.db, ctx.project.id);
      return presentTags(req.server.db, paginateArray(req, reply, rules));
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/protected_tags/:name',
    summary: 'Get a protected tag or wildcard by its exact name',
    tags: ['protected_tags'],
    response: ProtectedTag,
    access: 'authenticated', project: { ability: 'read_protected_branch' },
    input: Input({ id: IdOrPath(), name: Str() }),
    async handler(req) {
      const ctx = req.project;
      const rule = await findProtectedTag(req.server.db, ctx.project.id, req.input.name);
      return (await presentTags(req.server.db, [rule]))[0];
    },
  },
  {
    method: 'POST',
    url: '/projects/:id/protected_tags',
    summary: 'Protect a tag or wildcard',
    tags: ['protected_tags'],
    response: ProtectedTag,
    access: 'authenticated', project: { ability: 'admin_project' },
    input: Input({
      id: IdOrPath(),
      name: Str(),
      create_access_level: Opt(Level()),
      allowed_to_create: Entries(),
    }),
    async handler(req) {
      const ctx = req.project;
      const rule = await createProtectedTag(req.server, ctx.project.id, req.input.name,
        entriesFrom(req.input.create_access_level, req.input.allowed_to_create, 40));
      return (await presentTags(req.server.db, [rule]))[0];
    },
  },
  {
    method: 'DELETE',
    url: '/projects/:id/protected_tags/:name',
    summary: 'Unprotect a tag or wildcard (by its literal name)',
    tags: ['protected_tags'],
    response: null,
    access: 'authenticated', project: { ability: 'admin_project' },
    input: Input({ id: IdOrPath(), name: Str() }),
    async handler(req) {
      const ctx = req.project;
      const rule = await findProtectedTag(req.server.db, ctx.project.id, req.input.name);
      checkUnmodifiedSince(req, rule.updated_at);
      await deleteProtectedTag(req.server.db, rule.id);
      return undefined;
    },
  },
];
