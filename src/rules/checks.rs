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
    /// Once per container of every pod spec.
    Container(ContainerCheck),
    /// Once per file, over its suppressions, after every other check.
    Suppressions(SuppressionCheck),
}

/// The checks of the rule with this code. Most rules have one; GK109 judges containers and
/// LimitRanges alike.
pub fn of(code: Code) -> &'static [Check] {
    match code {
        Code::GK000 => &[Check::File(gk000::check)],
        Code::GK001 => &[Check::File(gk001::check)],
        Code::GK101 => &[Check::Container(gk101::check)],
        Code::GK102 => &[Check::Container(gk102::check)],
        Code::GK103 => &[Check::Container(gk103::check)],
        Code::GK104 => &[Check::Container(gk104::check)],
        Code::GK105 => &[Check::Container(gk105::check)],
        Code::GK106 => &[Check::Container(gk106::check)],
        Code::GK107 => &[Check::Container(gk107::check)],
        Code::GK108 => &[Check::Container(gk108::check)],
        Code::GK109 => &[
            Check::Container(gk109::check),
            Check::Object(gk109::check_limit_range),
        ],
        Code::GK110 => &[Check::Container(gk110::check)],
        Code::GK201 => &[Check::Container(gk201::check)],
        Code::GK202 => &[Check::Container(gk202::check)],
        Code::GK203 => &[Check::Container(gk203::check)],
        Code::GK204 => &[Check::Container(gk204::check)],
        Code::GK205 => &[Check::Container(gk205::check)],
        Code::GK206 => &[Check::Container(gk206::check)],
        Code::GK207 => &[Check::Container(gk207::check)],
        Code::GK301 => &[Check::Container(gk301::check)],
        Code::GK302 => &[Check::Container(gk302::check)],
        Code::GK303 => &[Check::Container(gk303::check)],
        Code::GK401 => &[Check::Container(gk401::check)],
        Code::GK901 => &[Check::Suppressions(gk901::check)],
        Code::GK902 => &[Check::Suppressions(gk902::check)],
    }
}
