//! What the macros read of URIs and URI templates at compile time, so a resource's mistakes
//! are compile errors: the scheme of a fixed URI, the variables of a template.

/// The variables of a URI template, for the compile-time check against the parameters
/// (the runtime crate parses and matches templates with a URI template crate); an error for
/// an unclosed brace or an expression above level 2.
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
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'));
        if !plain {
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
