//! What the macros read of URIs and URI templates at compile time, so a resource's mistakes
//! are compile errors: the scheme of a fixed URI, the variables of a template.

/// The variables of a URI template, for the compile-time check against the parameters; an
/// error for an unclosed brace, an expression above level 2 or a repeated variable. It
/// accepts exactly what the runtime's `UriTemplate::parse` accepts (the tests below hold
/// both to one table), so a template it passes never fails when the server is built.
pub(crate) fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut variables = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err(format!("unclosed `{{` in URI template {template:?}"));
        };
        let expression = &after[..close];
        let name = expression.strip_prefix(['+', '#']).unwrap_or(expression);
        if !is_varname(name) {
            return Err(format!(
                "`{{{expression}}}` is not supported: URI templates are read at level 2 (`{{var}}`, `{{+var}}`, `{{#var}}`), one variable per expression"
            ));
        }
        if variables.iter().any(|v| v == name) {
            return Err(format!("template variable `{name}` appears twice"));
        }
        variables.push(name.to_owned());
        rest = &after[close + 1..];
    }
    Ok(variables)
}

/// Whether `uri` starts with a URI scheme and `:`.
pub(crate) fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Whether `name` is an RFC 6570 `varname` (`ALPHA / DIGIT / "_" / pct-encoded`, dots
/// between), by the runtime's rule (`resource/template.rs`): anything else inside braces is
/// an operator or modifier of a level above 2.
fn is_varname(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'))
}

#[cfg(test)]
mod tests {
    //! The macro's reading against the runtime's, on one table: the two must agree on every
    //! entry, or a template (or URI) passes the compile-time check and fails at run time.

    use super::{has_scheme, template_variables};

    const TEMPLATES: &[&str] = &[
        "users://{id}/profile",
        "file:///{+path}",
        "docs://{#section}",
        "a://{x}/{y}/{z}",
        "a://{v.1}/{snake_case}/{%41b}",
        "a://no-variables",
        "a://{a..b}",
        "a://{.a}",
        "a://{a.}",
        "a://{}",
        "a://{+}",
        "a://{?q}",
        "a://{/p}",
        "a://{a,b}",
        "a://{x*}",
        "a://{x:3}",
        "a://{a-b}",
        "a://{a{b}",
        "a://{x}/{x}",
        "a://{open",
        "a://close}",
    ];

    const URIS: &[&str] = &[
        "file:///notes.txt",
        "team://rota",
        "urn:isbn:0451450523",
        "a+b-c.d:x",
        "notes.txt",
        "/absolute/path",
        "1abc:x",
        ":x",
        "ht tp://x",
        "",
    ];

    #[test]
    fn templates_are_read_as_the_runtime_reads_them() {
        for template in TEMPLATES {
            let runtime = mcp_registry::resource::UriTemplate::parse(template)
                .map(|t| t.variables().to_vec());
            let macros = template_variables(template);
            assert_eq!(
                macros.is_ok(),
                runtime.is_ok(),
                "{template:?}: macro {macros:?}, runtime {runtime:?}"
            );
            if let (Ok(macros), Ok(runtime)) = (macros, runtime) {
                assert_eq!(macros, runtime, "{template:?}");
            }
        }
    }

    #[test]
    fn uris_need_a_scheme_as_the_runtime_says() {
        for uri in URIS {
            let runtime = mcp_registry::Resource::builder(*uri, "r")
                .handler(|_| async { "" })
                .is_ok();
            assert_eq!(has_scheme(uri), runtime, "{uri:?}");
        }
    }
}
