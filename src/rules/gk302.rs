//! GK302 env-value-not-string: kubectl and Helm read YAML 1.1, where unquoted `off`, `4` or
//! `0100` are a boolean and numbers; `EnvVar.value` is a string, so the API server rejects them,
//! and typed clients turn `off` into "false" (docs/semantics.md, quantities and YAML).

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::Edit;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::k8s::container::EnvValue;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    for var in &cx.c.env {
        let EnvValue::Literal {
            node,
            text,
            resolved,
            ..
        } = &var.value
        else {
            continue;
        };
        // A null (`~`, `null`, nothing) decodes as "leave the string empty": the API server accepts
        // it, so it is not this rule's business.
        if resolved.is_string()
            || matches!(resolved, crate::yaml::Yaml11::Null)
            || cx.y.is_alias(*node)
        {
            continue;
        }
        // A standard tag makes any scalar that type, quoted or not: `!!int "100"`.
        let tag =
            cx.y.scalar(*node).and_then(|(_, _, tag)| tag).map(|t| {
                crate::yaml::short_tag(t).map_or_else(|| t.to_string(), |s| format!("!!{s}"))
            });
        let json = resolved.json_text().unwrap_or_default();
        let message = if json.is_empty() {
            // `.inf` and `.nan`: JSON has no such numbers, so the YAML-to-JSON step itself fails.
            format!(
                "env {} value {text} is a YAML 1.1 {}, not a string: kubectl and Helm cannot even convert it to JSON and refuse the manifest",
                var.name,
                resolved.type_name()
            )
        } else {
            format!(
                "env {} value {text} is a YAML 1.1 {} ({json}), not a string: kubectl and Helm send it as such and the API server rejects the object",
                var.name,
                resolved.type_name()
            )
        };
        let mut d = cx.diag(Code::GK302, *node, message);
        if json == "false" || json == "true" {
            d = d.note(format!("typed Go clients instead turn it into the string \"{json}\", which is not what you wrote"));
        }
        if let Some(tag) = tag {
            // Quoting alone would keep the tag; the edit that removes it is the author's call.
            out.push(d.note(format!(
                "the tag {tag} makes the value a {}; remove the tag, and quote the value",
                resolved.type_name()
            )));
            continue;
        }
        let source = &cx.src.text[cx.y.span(*node)];
        let edit = Edit {
            range: cx.y.span(*node),
            text: crate::edit::quote(source, false),
        };
        d = d.with_fix(Some(Fix {
            applicability: Applicability::Safe,
            title: format!("quote the value: \"{source}\""),
            edits: vec![edit],
        }));
        out.push(d);
    }
}
