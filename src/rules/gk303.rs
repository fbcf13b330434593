//! GK303 duplicate-env: the same env var twice in one container's `env` (the last entry wins,
//! silently), or a Go variable that `env` and an `envFrom` ConfigMap in the input set differently.

use super::Code;
use std::collections::HashMap;

use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::runtime::GO_ENV_VARS;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let env = &cx.c.env;
    // Short lists (nearly all) are searched directly; an index by name keeps a container with
    // tens of thousands of env entries linear.
    let index = (env.len() > 16).then(|| {
        let mut count: HashMap<&str, usize> = HashMap::with_capacity(env.len());
        let mut last_at: HashMap<&str, usize> = HashMap::with_capacity(env.len());
        // For each entry: the entry of the same name before it, and how many came before.
        let mut before: Vec<(Option<usize>, usize)> = Vec::with_capacity(env.len());
        for (i, var) in env.iter().enumerate() {
            let seen = count.entry(var.name).or_insert(0);
            before.push((last_at.insert(var.name, i), *seen));
            *seen += 1;
        }
        (count, last_at, before)
    });
    let count_of = |name: &str| match &index {
        Some((count, _, _)) => count[name],
        None => env.iter().filter(|e| e.name == name).count(),
    };
    let last_of = |name: &str| match &index {
        Some((_, last_at, _)) => last_at[name],
        None => env.iter().rposition(|e| e.name == name).unwrap_or(0),
    };
    let before = |i: usize| match &index {
        Some((_, _, before)) => before[i],
        None => {
            let name = env[i].name;
            let earlier = env[..i].iter().filter(|e| e.name == name).count();
            (env[..i].iter().rposition(|e| e.name == name), earlier)
        }
    };
    for (i, var) in env.iter().enumerate() {
        if let (Some(previous), earlier) = before(i) {
            let (line, _) = cx.src.line_col(cx.y.span(env[previous].name_node).start);
            // With more than two, say which one this is: each overrides the one just before it.
            let (times, this) = match count_of(var.name) {
                2 => ("twice".to_string(), "this entry".to_string()),
                n => (
                    format!("{n} times"),
                    format!("entry {} of {n}", earlier + 1),
                ),
            };
            out.push(cx.diag(
                Code::GK303,
                var.name_node,
                format!("env {} is set {times} in {}: {this} overrides the one on line {line}, silently", var.name, cx.who()),
            ));
            continue;
        }
        if !GO_ENV_VARS.contains(&var.name) || last_of(var.name) > i {
            continue;
        }
        let (Some(from_cm), Some(own)) = (cx.env_from_value(var.name), var.literal()) else {
            continue;
        };
        if from_cm != own {
            out.push(cx.diag(
                Code::GK303,
                var.name_node,
                format!("env {} is {own:?} here but {from_cm:?} in the envFrom ConfigMap: the env entry wins, so the ConfigMap's value is dead", var.name),
            ));
        }
    }
}
