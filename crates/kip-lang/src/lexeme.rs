//! The lexical rules shared by both parsers (pest's and the hand-written
//! fast path) and the formatter: what an identifier and a type name are,
//! and how a string literal's escapes decode. A leaf: it depends on
//! nothing else in the crate.

/// Whether `s` matches `[a-zA-Z_][a-zA-Z0-9_]*`.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `s` is a valid concept type name: an identifier, optionally with
/// the `$` prefix of meta-types.
pub fn is_type_name(s: &str) -> bool {
    is_identifier(s.strip_prefix('$').unwrap_or(s))
}

/// Decodes the JSON escapes of a string literal's body.
pub(crate) fn unescape(body: &str) -> Result<String, String> {
    if !body.contains('\\') {
        return Ok(body.to_owned());
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hi = hex4(&mut chars)?;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    let low = match (chars.next(), chars.next()) {
                        (Some('\\'), Some('u')) => hex4(&mut chars)?,
                        _ => return Err(format!("unpaired surrogate \\u{hi:04x} in string")),
                    };
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(format!("unpaired surrogate \\u{hi:04x} in string"));
                    }
                    0x10000 + ((hi - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    hi
                };
                match char::from_u32(code) {
                    Some(ch) => out.push(ch),
                    None => return Err(format!("\\u{code:04x} is not a character")),
                }
            }
            _ => return Err("invalid escape in string".into()),
        }
    }
    Ok(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Result<u32, String> {
    let digits: String = chars.take(4).collect();
    u32::from_str_radix(&digits, 16).map_err(|_| format!("invalid escape \\u{digits}"))
}
