import { Type, type TSchema } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Input, Int, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import type { ProjectAbility } from '../../platform/access/policy.ts';
import { usersByIds } from '../users/users.service.ts';
import { addAward, awardsQuery, findAward, removeAward, type Awardable, type AwardRow } from './award-emoji.service.ts';
import { awardEmojiEntity } from './award-emoji.presenter.ts';
import { AwardEmoji } from './award-emoji.schemas.ts';

// The award emoji routes of one kind of awardable, the same four for each: `<base>/award_emoji[/:award_id]`. The
// kind finds the awardable for the caller (404 exactly as its own routes answer when it is hidden).

export interface AwardableKind {
  /** The awardable's URL, relative to /api/v4: "/projects/:id/issues/:issue_iid". */
  base: string;
  /** Its path parameters. */
  params: Record<string, TSchema>;
  /** "an issue", "a note of an issue". */
  what: string;
  ability: ProjectAbility;
  tags: string[];
  find(req: ApiRequest<any>): Promise<Awardable>;
}

export function awardRoutes(kind: AwardableKind): RouteDef<any>[] {
  const { base, params, what, tags } = kind;
  const project = { ability: kind.ability };
  const present = async (req: ApiRequest<any>, rows: AwardRow[]) => {
    const users = await usersByIds(req.server, rows.map((r) => r.user_id));
    return rows.map((r) => awardEmojiEntity(r, users.get(r.user_id), req.server.config.externalUrl));
  };
  return [
    {
      method: 'GET', url: `${base}/award_emoji`, summary: `Award emoji on ${what}`, tags, access: 'authenticated', project,
      response: Type.Array(AwardEmoji), input: Input({ ...params, ...PaginationParams }),
      handler: async (req, reply) => {
        const target = await kind.find(req);
        return present(req, await paginateQuery(req, reply, awardsQuery(req.server.db, target)));
      },
    },
    {
      method: 'GET', url: `${base}/award_emoji/:award_id`, summary: `One award emoji on ${what}`, tags, access: 'authenticated', project,
      response: AwardEmoji, input: Input({ ...params, award_id: Int() }),
      handler: async (req) => (await present(req, [await findAward(req.server.db, await kind.find(req), req.input.award_id)]))[0],
    },
    {
      method: 'POST', url: `${base}/award_emoji`, summary: `Award an emoji to ${what}`, tags, access: 'authenticated', project,
      response: AwardEmoji, input: Input({ ...params, name: Str() }),
      handler: async (req) => {
        const award = await addAward(req.server, req.actor, await kind.find(req), req.input.name);
        return awardEmojiEntity(award, req.actor.user!, req.server.config.externalUrl);
      },
    },
    {
      method: 'DELETE', url: `${base}/award_emoji/:award_id`, summary: `Remove one's award emoji from ${what}`, tags, access: 'authenticated', project,
      response: null, input: Input({ ...params, award_id: Int() }),
      handler: async (req) => {
        const target = await kind.find(req);
        await removeAward(req.server, req.actor, await findAward(req.server.db, target, req.input.award_id));
        return undefined;
      },
    },
  ];
}
