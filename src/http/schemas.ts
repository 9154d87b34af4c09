import { Type, type TSchema, type TProperties, type TObject } from '@sinclair/typebox';
import type { UploadedFile } from '../platform/storage/uploads.ts';

// Shared parameter shapes, so every route declares the same thing the same way.

export const Bool = (opts: { default?: boolean; description?: string } = {}) => Type.Boolean(opts);
export const Int = (opts: { default?: number; minimum?: number; description?: string } = {}) => Type.Integer(opts);
export const Str = (opts: { default?: string; description?: string; minLength?: number; maxLength?: number } = {}) => Type.String(opts);
export const DateTime = (opts: { description?: string } = {}) => Type.String({ format: 'date-time', ...opts });
export const DateOnly = (opts: { description?: string } = {}) => Type.String({ format: 'date', ...opts });
export const Enum = <T extends string>(values: readonly T[], opts: { default?: T; description?: string } = {}) =>
  Type.Union(values.map((v) => Type.Literal(v)), opts);
export const IntEnum = (values: readonly number[], opts: { default?: number; description?: string } = {}) =>
  Type.Union(values.map((v) => Type.Literal(v)), opts);
export const IdOrPath = (description = 'ID or URL-encoded path') => Type.String({ description });
export const Opt = Type.Optional;
export const COMMA_SEPARATED = 'x-comma-separated';
export const FILE_PART = 'x-file';
export const FILE_MAX_BYTES = 'x-max-bytes';
/**
 * A file parameter: only a file part of a multipart body fills it (`avatar`, `file`). `maxBytes` is the route's
 * own size limit: reading stops past it and the request answers 400 "File is too large" (the reference's words).
 */
export const File = (opts: { description?: string; maxBytes?: number } = {}) => {
  const { maxBytes, ...rest } = opts;
  return Type.Unsafe<UploadedFile>({ type: 'object', ...rest, [FILE_PART]: true, ...(maxBytes !== undefined ? { [FILE_MAX_BYTES]: maxBytes } : {}) });
};
/**
 * An array that also takes one comma-separated string (`scopes=api,read_user`), where the reference declares
 * `coerce_with: CommaSeparatedToArray`; elsewhere a string stays one element.
 */
export const CommaList = <T extends TSchema>(items: T, opts: { minItems?: number; description?: string } = {}) =>
  Type.Array(items, { ...opts, [COMMA_SEPARATED]: true });


export const PaginationParams = {
  page: Type.Optional(Type.Integer({ default: 1, description: 'page number' })),
  per_page: Type.Optional(Type.Integer({ default: 20, not: { const: 0 }, description: 'items per page (at most 100)' })),
};

export function Input<P extends TProperties>(props: P): TObject<P> {
  return Type.Object(props, { additionalProperties: true });
}

export type { TSchema };
