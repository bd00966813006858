//! Finding text that bash would execute while expanding a word.
//!
//! tree-sitter-bash gives us `command_substitution` and `process_substitution` nodes
//! for almost every case, and `parse.rs` trusts those. This file covers the places
//! where the grammar does not look inside the text, so we must:
//!
//! * **Unquoted here-document bodies.** The grammar parses `$(...)` inside a body but
//!   not backticks (it leaves `` `id` `` as plain `heredoc_content`), and it mistakes
//!   arithmetic `$((1+2))` for a command substitution. So the body of every heredoc
//!   whose delimiter is unquoted is scanned here instead, in [`Mode::DoubleQuoted`]
//!   (bash expands a heredoc body as if it were inside double quotes, except that `"`
//!   is not special there).
//! * **Leaves that swallow text.** In `${z#$(id)}` and `"${z//`id`/y}"` the pattern is a
//!   single `regex` leaf with the substitution inside it. Every leaf that bash still
//!   expands is therefore scanned too; for a correctly tokenised leaf this finds
//!   nothing, because a real substitution would have been its own node.
//! * **Single quotes inside `"${x:-'...'}"`.** Inside double quotes bash does not treat
//!   those single quotes as quoting (`"${x:-'$(id)'}"` runs `id`), but the grammar
//!   produces a `raw_string`. `parse.rs` scans such a `raw_string` here.
//! * **Text that does not parse.** When the tree has errors we cannot trust its shape,
//!   so the whole command is scanned in [`Mode::Script`] as a safety net.
//!
//! The scanner only answers "is there a construct that would execute?", never where it
//! ends, which keeps it small: the first hit is enough to deny.

/// A construct that makes bash run a command (or evaluate code) during expansion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Construct {
    /// `$(...)`
    Dollar,
    /// `` `...` ``
    Backtick,
    /// `<(...)`
    ProcessIn,
    /// `>(...)`
    ProcessOut,
    /// `${var@P}`: prompt expansion, which performs command substitution on the
    /// variable's *value* (with the default `promptvars` option).
    Prompt,
}

impl Construct {
    /// How the construct is named in a decision's reason.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Construct::Dollar => "command substitution $(...)",
            Construct::Backtick => "command substitution `...`",
            Construct::ProcessIn => "process substitution <(...)",
            Construct::ProcessOut => "process substitution >(...)",
            Construct::Prompt => "prompt expansion ${var@P} (it runs substitutions held in the variable)",
        }
    }
}

/// The quoting context the scanned text sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Raw shell source: quotes, `$'...'`, comments and process substitution all count.
    Script,
    /// One unquoted token (no comments; `<(` cannot occur inside a token).
    Word,
    /// Text bash expands as if double quoted: a heredoc body, a string's content.
    /// Neither `'` nor `"` quotes anything here.
    DoubleQuoted,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
    AnsiC,
}

/// Returns the first construct in `text` that bash would execute, if any.
pub(crate) fn scan(text: &str, mode: Mode) -> Option<Construct> {
    // Only ASCII bytes are significant, and no byte of a multi-byte UTF-8 character
    // is ASCII, so scanning bytes is exact.
    let b = text.as_bytes();
    // The byte bash sees at `i`: a backslash-newline is a line continuation that
    // vanishes before tokenising, so `$\<newline>(id)` is `$(id)`.
    let at = |i: usize| b.get(skip_continuations(b, i)).copied().unwrap_or(0);
    let after = |i: usize| skip_continuations(b, i) + 1;
    let mut arith: Option<ArithmeticCloser> = None;
    let mut quote = if mode == Mode::DoubleQuoted {
        Quote::Double
    } else {
        Quote::None
    };
    // Depth of `${...}`, to recognise `@P}` only inside a parameter expansion.
    let mut braces = 0usize;
    // A `#` starts a comment only at the start of a word.
    let mut word_start = true;
    // Here-documents whose bodies start after the current line (Script mode).
    let mut pending: Vec<Heredoc> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Quote::Single => {
                if c == b'\'' {
                    quote = Quote::None;
                }
                i += 1;
                continue;
            }
            Quote::AnsiC => {
                match c {
                    b'\\' => i += 2,
                    b'\'' => {
                        quote = Quote::None;
                        i += 1;
                    }
                    _ => i += 1,
                }
                continue;
            }
            Quote::None | Quote::Double => {}
        }
        // From here on we are unquoted or double quoted: expansions are live.
        match c {
            // An escaped character is literal. (Inside double quotes a backslash only
            // escapes `$ ` " \` and newline, but skipping the next byte is still
            // right: any other byte after it cannot start a construct.) An escaped
            // newline is a continuation and leaves `word_start` as it was.
            b'\\' => {
                if at(i + 1) != b'\n' {
                    word_start = false;
                }
                i += 2;
                continue;
            }
            b'`' => return Some(Construct::Backtick),
            b'$' if at(i + 1) == b'(' => {
                let open = skip_continuations(b, i + 1);
                let closer = arith.get_or_insert_with(|| ArithmeticCloser::new(b));
                if at(open + 1) == b'(' && closer.is_arithmetic(open, skip_continuations(b, open + 1)) {
                    // `$((...))` is arithmetic, not a command; keep scanning inside it,
                    // where a nested `$(...)` or backtick would still run.
                    i = after(open + 1);
                    word_start = false;
                    continue;
                }
                return Some(Construct::Dollar);
            }
            b'$' if at(i + 1) == b'{' => {
                braces += 1;
                i = after(i + 1);
                word_start = false;
                continue;
            }
            b'$' if at(i + 1) == b'\'' && quote == Quote::None && mode != Mode::DoubleQuoted => {
                quote = Quote::AnsiC;
                i = after(i + 1);
                word_start = false;
                continue;
            }
            b'}' if braces > 0 => braces -= 1,
            b'@' if braces > 0 && at(i + 1) == b'P' && at(after(i + 1)) == b'}' => return Some(Construct::Prompt),
            _ => {}
        }
        if quote == Quote::None && mode != Mode::DoubleQuoted {
            match c {
                b'\'' => quote = Quote::Single,
                b'"' => quote = Quote::Double,
                b'<' if mode == Mode::Script && at(i + 1) == b'<' && at(after(i + 1)) != b'<' => {
                    // `<<` (not the here-string `<<<`): note the delimiter; the body
                    // starts at the next newline.
                    let (heredoc, next) = read_heredoc_start(b, after(i + 1));
                    pending.extend(heredoc);
                    i = next;
                    word_start = false;
                    continue;
                }
                b'<' if mode == Mode::Script && at(i + 1) == b'(' => return Some(Construct::ProcessIn),
                b'>' if mode == Mode::Script && at(i + 1) == b'(' => return Some(Construct::ProcessOut),
                b'#' if mode == Mode::Script && word_start => {
                    // A comment runs to the end of the line (a trailing backslash
                    // does not continue it).
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'\n' if !pending.is_empty() => {
                    let mut next = i + 1;
                    for heredoc in pending.drain(..) {
                        let (body, end) = heredoc_body(b, next, &heredoc);
                        if !heredoc.quoted {
                            if let Some(found) = text.get(body).and_then(|t| scan(t, Mode::DoubleQuoted)) {
                                return Some(found);
                            }
                        }
                        next = end;
                    }
                    i = next;
                    word_start = true;
                    continue;
                }
                _ => {}
            }
        } else if quote == Quote::Double && c == b'"' && mode != Mode::DoubleQuoted && braces == 0 {
            // Inside `"${...}"` a `"` nests rather than closes; staying in the double
            // quoted state there is the cautious reading.
            quote = Quote::None;
        }
        word_start = c.is_ascii_whitespace() || b";&|()<>".contains(&c);
        i += 1;
    }
    None
}

/// Skips backslash-newline pairs starting at `i`.
fn skip_continuations(b: &[u8], mut i: usize) -> usize {
    while b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'\n') {
        i += 2;
    }
    i
}

/// A here-document announced on the current line.
struct Heredoc {
    delimiter: Vec<u8>,
    /// Any quoting in the delimiter turns expansion in the body off.
    quoted: bool,
    /// `<<-` strips leading tabs, also from the terminating line.
    strip_tabs: bool,
}

/// Reads `[-] WORD` after `<<`; returns it (if any) and where scanning resumes.
fn read_heredoc_start(b: &[u8], mut i: usize) -> (Option<Heredoc>, usize) {
    let strip_tabs = b.get(i) == Some(&b'-');
    if strip_tabs {
        i += 1;
    }
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let mut delimiter = Vec::new();
    let mut quoted = false;
    while let Some(&c) = b.get(i) {
        if c.is_ascii_whitespace() || b";&|()<>".contains(&c) {
            break;
        }
        match c {
            b'\'' | b'"' => {
                quoted = true;
                let end = b[i + 1..].iter().position(|&x| x == c).map_or(b.len(), |p| i + 1 + p);
                delimiter.extend_from_slice(&b[i + 1..end]);
                i = end + 1;
            }
            b'\\' => {
                quoted = true;
                delimiter.extend(b.get(i + 1));
                i += 2;
            }
            _ => {
                delimiter.push(c);
                i += 1;
            }
        }
    }
    let heredoc = (!delimiter.is_empty()).then_some(Heredoc {
        delimiter,
        quoted,
        strip_tabs,
    });
    (heredoc, i.min(b.len()))
}

/// The byte range of a body starting at `start`, and where the text after its
/// terminating line begins. An unterminated body runs to the end.
fn heredoc_body(b: &[u8], start: usize, heredoc: &Heredoc) -> (std::ops::Range<usize>, usize) {
    let mut line = start;
    while line < b.len() {
        let end = b[line..].iter().position(|&x| x == b'\n').map_or(b.len(), |p| line + p);
        let mut content = &b[line..end];
        if heredoc.strip_tabs {
            while let [b'\t', rest @ ..] = content {
                content = rest;
            }
        }
        if content == heredoc.delimiter.as_slice() {
            return (start..line, (end + 1).min(b.len()));
        }
        line = end + 1;
    }
    (start.min(b.len())..b.len(), b.len())
}

/// Decides whether `$((` starts arithmetic or a command substitution that begins
/// with a subshell, the way bash does: it is arithmetic when the two opening
/// parentheses are closed by two adjacent `))`. Matching parentheses are found once
/// for the whole text (so many `$((` cost linear, not quadratic, time). Quotes are
/// ignored here; a wrong answer only matters for malformed text, and the contents
/// of an arithmetic expansion are scanned anyway.
struct ArithmeticCloser {
    /// For each byte offset of a `(`, the offset of its matching `)` (or `usize::MAX`).
    close_of: Vec<usize>,
}

impl ArithmeticCloser {
    fn new(b: &[u8]) -> Self {
        let mut close_of = vec![usize::MAX; b.len()];
        let mut open = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 1,
                b'(' => open.push(i),
                b')' => {
                    if let Some(o) = open.pop() {
                        close_of[o] = i;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        ArithmeticCloser { close_of }
    }

    /// `outer` and `inner` are the offsets of the two `(` of `$((`.
    fn is_arithmetic(&self, outer: usize, inner: usize) -> bool {
        let (Some(&o), Some(&i)) = (self.close_of.get(outer), self.close_of.get(inner)) else {
            return false;
        };
        o != usize::MAX && i != usize::MAX && i + 1 == o
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn scanner_modes() {
        use Construct::*;
        use Mode::*;
        let cases: &[(&str, Mode, Option<Construct>)] = &[
            ("echo $(id)", Script, Some(Dollar)),
            ("echo `id`", Script, Some(Backtick)),
            ("echo '$(id)'", Script, None),
            ("echo \\$(id) \\`x\\`", Script, None),
            ("echo \"$(id)\"", Script, Some(Dollar)),
            ("echo \"<(x)\"", Script, None),
            ("diff <(a) b", Script, Some(ProcessIn)),
            ("tee >(a)", Script, Some(ProcessOut)),
            ("ls # $(x)", Script, None),
            ("echo a#$(x)", Script, Some(Dollar)),
            ("echo $'\\'$(x)'", Script, None),
            ("echo $((1+2))", Script, None),
            ("echo $(( $(id) ))", Script, Some(Dollar)),
            ("echo $((id) )", Script, Some(Dollar)),
            ("${x@P}", Script, Some(Prompt)),
            ("${x@Q} a@P}", Script, None),
            ("it's $(id)", DoubleQuoted, Some(Dollar)),
            ("a `id` b", DoubleQuoted, Some(Backtick)),
            ("a \\`id\\` \\$(x) $((1+2))", DoubleQuoted, None),
            ("${x:-'$(id)'}", DoubleQuoted, Some(Dollar)),
            ("x <(y)", DoubleQuoted, None),
            ("$(", Word, Some(Dollar)),
            ("a\\`b", Word, None),
            ("", Script, None),
            ("\\", Script, None),
            ("echo $\\\n(id)", Script, Some(Dollar)),
            ("echo `i\\\nd`", Script, Some(Backtick)),
            ("cat <\\\n(ls)", Script, Some(ProcessIn)),
            ("ls # x \\\n$(id)", Script, Some(Dollar)),
            ("cat <<'EOF'\n$(id) it's\nEOF\necho ok", Script, None),
            ("cat <<EOF\nit's $(id)\nEOF", Script, Some(Dollar)),
            ("cat <<-\"E\"\n\t`id`\n\tE\n$(x)", Script, Some(Dollar)),
            ("cat <<-\"E\"\n\t`id`\n\tE\nok", Script, None),
            ("cat <<< '$(x)'", Script, None),
            ("cat <<E\n\\$(x)\nE", Script, None),
        ];
        for (text, mode, want) in cases {
            assert_eq!(scan(text, *mode), *want, "{text:?} in {mode:?}");
        }
    }
}
