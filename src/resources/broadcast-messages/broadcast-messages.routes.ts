import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, DateTime, Enum, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { parseDateTime } from '../../http/params.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { ParamError } from '../../platform/errors.ts';
import {
  BROADCAST_TYPES, TARGET_ACCESS_LEVELS, createBroadcastMessage, deleteBroadcastMessage, getBroadcastMessage,
  listBroadcastMessagesQuery, updateBroadcastMessage, type BroadcastMessageInput,
} from './broadcast-messages.service.ts';
import { broadcastMessageJson } from './broadcast-messages.presenter.ts';
import { BroadcastMessage } from './broadcast-messages.schemas.ts';

const tags = ['broadcast_messages'];

const fields = {
  starts_at: Opt(DateTime({ description: 'start of the window (default now, UTC)' })),
  ends_at: Opt(DateTime({ description: 'end of the window (default one hour after now)' })),
  font: Opt(Str({ description: 'foreground color hex code' })),
  // A comma-separated string ("10,30") or an array (`target_access_levels[]=10`); the string comes first so
  // that coercion never wraps "10,30" into a one-element array. Parsed below.
  target_access_levels: Opt(Type.Union([Type.String(), Type.Array(Type.Union([Type.Integer(), Type.String()]))], { description: 'access levels 10, 20, 30, 40, 50' })),
  target_path: Opt(Str({ description: 'pages to show the message on; * is a wildcard' })),
  broadcast_type: Opt(Enum(BROADCAST_TYPES, { description: '`banner` (default) or `notification`' })),
  dismissable: Opt(Bool({ description: 'whether users can dismiss the message' })),
};

function accessLevels(raw: unknown): number[] | undefined {
  if (raw === undefined) return undefined;
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : [raw];
  const out: number[] = [];
  for (const v of list) {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isInteger(n)) throw ParamError.of('target_access_levels', 'invalid');
    if (!(TARGET_ACCESS_LEVELS as readonly number[]).includes(n)) throw ParamError.of('target_access_levels', 'value');
    out.push(n);
  }
  return out;
}

function messageInput(i: Record<string, any>): BroadcastMessageInput {
  return {
    message: i.message,
    starts_at: i.starts_at === undefined ? undefined : parseDateTime(i.starts_at)!,
    ends_at: i.ends_at === undefined ? undefined : parseDateTime(i.ends_at)!,
    font: i.font,
    target_access_levels: accessLevels(i.target_access_levels),
    target_path: i.target_path,
    broadcast_type: i.broadcast_type,
    dismissable: i.dismissable,
  };
}

const now = (req: ApiRequest<any>) => req.server.clock.now();

export const broadcastMessageRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/broadcast_messages', summary: 'List broadcast messages, newest first', tags, access: 'public',
    response: Type.Array(BroadcastMessage),
    input: Input({ ...PaginationParams }),
    handler: async (req, reply) => {
      const rows = await paginateQuery(req, reply, listBroadcastMessagesQuery(req.server));
      return rows.map((r) => broadcastMessageJson(r, now(req)));
    },
  },
  {
    method: 'GET', url: '/broadcast_messages/:id', summary: 'One broadcast message', tags, access: 'public',
    response: BroadcastMessage,
    input: Input({ id: Int() }),
    handler: async (req) => broadcastMessageJson(await getBroadcastMessage(req.server, req.input.id), now(req)),
  },
  {
    method: 'POST', url: '/broadcast_messages', summary: 'Create a broadcast message', tags, access: 'admin',
    response: BroadcastMessage,
    input: Input({ message: Str({ description: 'the message (Markdown)' }), ...fields }),
    handler: async (req) => {
      const row = await createBroadcastMessage(req.server, { ...messageInput(req.input), message: req.input.message });
      return broadcastMessageJson(row, now(req));
    },
  },
  {
    method: 'PUT', url: '/broadcast_messages/:id', summary: 'Update a broadcast message', tags, access: 'admin',
    response: BroadcastMessage,
    input: Input({ id: Int(), message: Opt(Str()), ...fields }),
    handler: async (req) => {
      const input = messageInput(req.input);
      const row = await getBroadcastMessage(req.server, req.input.id);
      return broadcastMessageJson(await updateBroadcastMessage(req.server, row, input), now(req));
    },
  },
  {
    method: 'DELETE', url: '/broadcast_messages/:id', summary: 'Delete a broadcast message', tags, access: 'admin',
    response: null,
    input: Input({ id: Int() }),
    handler: async (req) => {
      const row = await getBroadcastMessage(req.server, req.input.id);
      checkUnmodifiedSince(req, row.updated_at);
      await deleteBroadcastMessage(req.server, row);
      return undefined;
    },
  },
];
