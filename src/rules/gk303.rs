//! GK303 duplicate-env: the same env var twice in one container's `env` (the last entry wins,
//! silently), or a Go variable that `env` and an `envFrom` ConfigMap in the input set differently.

use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::runtime::GO_ENV_VARS;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    for (i, var) in cx.c.env.iter().enumerate() {
        if let Some(first) = cx.c.env[..i].iter().find(|e| e.name == var.name) {
            let (line, _) = cx.src.line_col(cx.y.span(first.name_node).start);
            out.push(cx.diag(
                "GK303",
                var.name_node,
                format!("env {} is set twice in {}: this entry overrides the one on line {line}, silently", var.name, cx.who()),
            ));
            continue;
        }
        if !GO_ENV_VARS.contains(&var.name.as_str())
            || cx.c.env[i + 1..].iter().any(|e| e.name == var.name)
        {
            continue;
        }
        let (Some(from_cm), Some(own)) = (cx.env_from_value(&var.name), var.literal()) else {
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
