//! GK303 duplicate-env: the same env var twice in one container's `env` (the last entry wins,
//! silently), or a Go variable that `env` and an `envFrom` ConfigMap in the input set differently.

use std::collections::HashMap;

use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::runtime::GO_ENV_VARS;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let env = &cx.c.env;
    // Short lists (nearly all) are searched directly; an index by name keeps a container with
    // tens of thousands of env entries linear.
    let index = (env.len() > 16).then(|| {
        let mut first_at: HashMap<&str, usize> = HashMap::with_capacity(env.len());
        let mut last_at: HashMap<&str, usize> = HashMap::with_capacity(env.len());
        for (i, var) in env.iter().enumerate() {
            first_at.entry(var.name).or_insert(i);
            last_at.insert(var.name, i);
        }
        (first_at, last_at)
    });
    let first_of = |name: &str| match &index {
        Some((first_at, _)) => first_at[name],
        None => env.iter().position(|e| e.name == name).unwrap_or(0),
    };
    let last_of = |name: &str| match &index {
        Some((_, last_at)) => last_at[name],
        None => env.iter().rposition(|e| e.name == name).unwrap_or(0),
    };
    for (i, var) in env.iter().enumerate() {
        let first = first_of(var.name);
        if first < i {
            let first = &env[first];
            let (line, _) = cx.src.line_col(cx.y.span(first.name_node).start);
            out.push(cx.diag(
                "GK303",
                var.name_node,
                format!("env {} is set twice in {}: this entry overrides the one on line {line}, silently", var.name, cx.who()),
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
                "GK303",
                var.name_node,
                format!("env {} is {own:?} here but {from_cm:?} in the envFrom ConfigMap: the env entry wins, so the ConfigMap's value is dead", var.name),
            ));
        }
    }
}
