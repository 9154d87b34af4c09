import { Type, type Static, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';

// Building blocks of the declared response shapes (`RouteDef.response`, `<area>.schemas.ts`).
// They document /api/v4/openapi.json and the tests check every answer against them; they never serialize.

/** An entity: exactly these fields, in the presenter's order; anything else is drift. */
export const Entity = <P extends TProperties>(props: P, opts: { description?: string } = {}) =>
  Type.Object(props, { additionalProperties: false, ...opts });

/** A value the presenter may give as null (OpenAPI 3.0 `nullable`, which ajv also understands). */
export const Nullable = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> =>
  Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });

/** An ISO 8601 datetime as `iso()` writes it. */
export const Iso = () => Type.String({ format: 'date-time' });
/** A calendar date as `isoDate()` writes it. */
export const IsoDay = () => Type.String({ format: 'date' });

/** A JSON value whose shape the route does not fix (free-form maps such as settings). */
export const Any = () => Type.Unsafe<unknown>({});

/** The `{ "message": "202 Accepted" }` of deletions that finish later. */
export const Accepted = Type.Object({ message: Type.String() }, { additionalProperties: false, description: 'Accepted' });
