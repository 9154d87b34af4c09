import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { CommaList, Input, Int, Opt, Str } from '../../http/schemas.ts';
import { applySuggestions, presentableSuggestions } from './suggestions.service.ts';
import { suggestionEntity } from './suggestions.presenter.ts';
import { Suggestion } from './suggestions.schemas.ts';

// Applying suggestions: `PUT /suggestions/:id/apply` and `PUT /suggestions/batch_apply`. Who may apply is the
// merge request's source-branch push rule (the service asks it for each suggestion).

const tags = ['suggestions'];

export const suggestionRoutes: RouteDef<any>[] = [
  {
    method: 'PUT', url: '/suggestions/batch_apply', summary: 'Apply several suggestions as one commit on their source branch', tags, access: 'authenticated',
    response: Type.Array(Suggestion),
    input: Input({ ids: CommaList(Int()), commit_message: Opt(Str()) }),
    handler: async (req) => {
      const rows = await applySuggestions(req.server, req.actor, req.input.ids, req.input.commit_message, false);
      return (await presentableSuggestions(req.server, rows)).map(suggestionEntity);
    },
  },
  {
    method: 'PUT', url: '/suggestions/:id/apply', summary: 'Apply a suggestion as a commit on its merge request\'s source branch', tags, access: 'authenticated',
    response: Suggestion,
    input: Input({ id: Int(), commit_message: Opt(Str()) }),
    handler: async (req) => {
      const rows = await applySuggestions(req.server, req.actor, [req.input.id], req.input.commit_message, true);
      return (await presentableSuggestions(req.server, rows)).map(suggestionEntity)[0];
    },
  },
];
