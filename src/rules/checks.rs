//! Each rule's checks, by code. The rules' identities live in the low
//! [`crate::diagnostic::registry`]; this match is exhaustive, so a code without checks
//! does not compile.

use super::*;
use crate::diagnostic::Code;

pub type ContainerCheck = fn(&ContainerCtx, &mut Vec<Diagnostic>);
pub type ObjectCheck = fn(&ObjectCtx, &mut Vec<Diagnostic>);
pub type FileCheck = fn(&FileCtx, &mut Vec<Diagnostic>);
pub type SuppressionCheck = fn(&SuppressionCtx, &mut Vec<Diagnostic>);

/// What a check judges, and so when the engine runs it.
#[derive(Clone, Copy)]
pub enum Check {
    /// Once per parsed file: its syntax errors and duplicate keys.
    File(FileCheck),
    /// Once per Kubernetes object.
    Object(ObjectCheck),
    /// Once per container of every pod spec that is in the check's [`Scope`].
    Container(ContainerCheck, Scope),
    /// Once per file, over its suppressions, after every other check.
    Suppressions(SuppressionCheck),
}

/// Which containers a container check judges. The engine enforces it, so a rule states its scope
/// once, here, instead of re-checking it at its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    /// Only containers judged to run Go: the rule is about the Go runtime's settings.
    pub go_only: bool,
    /// The rule reports something missing (a variable, a limit). A Kustomize patch is a partial
    /// object that leaves out what its base sets, so such a rule does not run on one.
    pub reports_absence: bool,
}

/// Every container, complete or a patch.
const ANY: Scope = Scope {
    go_only: false,
    reports_absence: false,
};
/// Every complete container: the rule reports an absence.
const ANY_COMPLETE: Scope = Scope {
    go_only: false,
    reports_absence: true,
};
/// Containers that run Go.
const GO: Scope = Scope {
    go_only: true,
    reports_absence: false,
};
/// Complete containers that run Go: the rule reports an absence.
const GO_COMPLETE: Scope = Scope {
    go_only: true,
    reports_absence: true,
};

impl Scope {
    /// Whether a container is in this scope: `is_go` from the runtime view, `partial` when its
    /// file is a Kustomize patch.
    pub fn takes(self, is_go: bool, partial: bool) -> bool {
        (is_go || !self.go_only) && !(partial && self.reports_absence)
    }
}

/// The checks of the rule with this code. Most rules have one; GK109 judges containers and
/// LimitRanges alike.
pub fn of(code: Code) -> &'static [Check] {
    match code {
        Code::GK000 => &[Check::File(gk000::check)],
        Code::GK001 => &[Check::File(gk001::check)],
        Code::GK101 => &[Check::Container(gk101::check, GO_COMPLETE)],
        Code::GK102 => &[Check::Container(gk102::check, ANY)],
        Code::GK103 => &[Check::Container(gk103::check, GO)],
        Code::GK104 => &[Check::Container(gk104::check, GO)],
        Code::GK105 => &[Check::Container(gk105::check, GO)],
        Code::GK106 => &[Check::Container(gk106::check, GO_COMPLETE)],
        Code::GK107 => &[Check::Container(gk107::check, GO_COMPLETE)],
        Code::GK108 => &[Check::Container(gk108::check, GO)],
        Code::GK109 => &[
            Check::Container(gk109::check, ANY),
            Check::Object(gk109::check_limit_range),
        ],
        Code::GK110 => &[Check::Container(gk110::check, GO)],
        Code::GK201 => &[Check::Container(gk201::check, GO_COMPLETE)],
        Code::GK202 => &[Check::Container(gk202::check, GO)],
        Code::GK203 => &[Check::Container(gk203::check, ANY)],
        Code::GK204 => &[Check::Container(gk204::check, GO)],
        Code::GK205 => &[Check::Container(gk205::check, GO)],
        Code::GK206 => &[Check::Container(gk206::check, GO)],
        Code::GK207 => &[Check::Container(gk207::check, GO)],
        Code::GK301 => &[Check::Container(gk301::check, GO)],
        Code::GK302 => &[Check::Container(gk302::check, ANY)],
        Code::GK303 => &[Check::Container(gk303::check, ANY)],
        Code::GK401 => &[Check::Container(gk401::check, ANY_COMPLETE)],
        Code::GK901 => &[Check::Suppressions(gk901::check)],
        Code::GK902 => &[Check::Suppressions(gk902::check)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_take_go_containers_and_patches_as_declared() {
        // (is_go, partial) for a Go container, a container of another runtime, a Go patch.
        let cases = [(true, false), (false, false), (true, true), (false, true)];
        let takes = |s: Scope| cases.map(|(go, partial)| s.takes(go, partial));
        assert_eq!(takes(ANY), [true, true, true, true]);
        assert_eq!(takes(ANY_COMPLETE), [true, true, false, false]);
        assert_eq!(takes(GO), [true, false, true, false]);
        assert_eq!(takes(GO_COMPLETE), [true, false, false, false]);
    }

    #[test]
    fn a_rule_that_reports_a_missing_go_setting_is_scoped_to_complete_go_containers() {
        for code in [Code::GK101, Code::GK107, Code::GK201] {
            assert!(
                of(code)
                    .iter()
                    .all(|c| matches!(c, Check::Container(_, s) if *s == GO_COMPLETE)),
                "{code:?}"
            );
        }
    }
}
