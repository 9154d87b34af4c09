// The default branch protection levels (the reference's Gitlab::Access::BranchProtection) and the protected-branch
// rule each stands for: what groups show as `default_branch_protection_defaults` and what a new project's default
// branch gets.

export interface ProtectionDefaults {
  allowed_to_push: Array<{ access_level: number }>;
  allow_force_push: boolean;
  allowed_to_merge: Array<{ access_level: number }>;
  developer_can_initial_push?: boolean;
}

export function branchProtectionDefaults(level: number): ProtectionDefaults {
  const maintainers = [{ access_level: 40 }];
  const developers = [{ access_level: 30 }];
  switch (level) {
    case 0:
      return { allowed_to_push: developers, allow_force_push: true, allowed_to_merge: maintainers };
    case 1:
      return { allowed_to_push: developers, allow_force_push: false, allowed_to_merge: developers };
    case 3:
      return { allowed_to_push: maintainers, allow_force_push: false, allowed_to_merge: developers };
    case 4:
      return { allowed_to_push: maintainers, allow_force_push: false, allowed_to_merge: maintainers, developer_can_initial_push: true };
    default:
      return { allowed_to_push: maintainers, allow_force_push: false, allowed_to_merge: maintainers };
  }
}

/** Level 0 leaves the default branch unprotected. */
export function protectsDefaultBranch(level: number): boolean {
  return level !== 0;
}
