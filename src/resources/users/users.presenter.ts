import type { Identity, User } from './users.service.ts';
import { iso, isoDate, webUrl } from '../../http/format.ts';
import { avatarUrl } from '../../platform/storage/avatars.ts';

// Entities in the reference's field order: UserBasic ⊂ User ⊂ UserPublic ⊂ UserWithAdmin.

export function userRef(u: User, base: string) {
  return { id: u.id, username: u.username, name: u.name, state: u.state, locked: false, avatar_url: avatarUrl(base, 'user', u.id, u.avatar), web_url: webUrl(base, u.username) };
}

export function userBasic(u: User, base: string) {
  return userRef(u, base);
}

export function userEntity(u: User, base: string) {
  return {
    ...userBasic(u, base),
    created_at: iso(u.created_at),
    bio: u.bio,
    location: u.location,
    public_email: u.public_email ?? '',
    skype: '',
    linkedin: '',
    twitter: '',
    discord: '',
    website_url: u.website_url,
    organization: u.organization,
    job_title: u.job_title,
    pronouns: null,
    bot: u.user_type !== 'human',
    work_information: null,
    followers: 0,
    following: 0,
    is_followed: false,
    local_time: null,
  };
}

export function userPublic(u: User, base: string, namespaceId: number | null, identities: Identity[] = []) {
  return {
    ...userEntity(u, base),
    last_sign_in_at: iso(u.current_sign_in_at),
    confirmed_at: iso(u.confirmed_at),
    last_activity_on: isoDate(u.last_activity_on),
    email: u.email,
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: u.projects_limit,
    current_sign_in_at: iso(u.current_sign_in_at),
    identities,
    can_create_group: !!u.can_create_group,
    can_create_project: u.projects_limit > 0,
    two_factor_enabled: false,
    external: !!u.external,
    private_profile: !!u.private_profile,
    commit_email: u.email,
    namespace_id: namespaceId,
  };
}

export function userWithAdmin(u: User, base: string, namespaceId: number | null, identities: Identity[] = []) {
  return { ...userPublic(u, base, namespaceId, identities), is_admin: !!u.admin, note: u.note, using_license_seat: false };
}
