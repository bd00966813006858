//! Could an unquoted glob word expand to a given word?
//!
//! Used only on the deny side ("might `git pus?` be `git push`?"), where answering
//! "yes" too often is the safe mistake. So a bracket expression `[...]` is taken to
//! match any single character rather than interpreted exactly.

/// `pattern` uses backslash to mark a literal character (quoted text in the
/// original word is escaped this way by `words.rs`); `*`, `?` and `[...]` are live.
pub(crate) fn may_match(pattern: &str, text: &str) -> bool {
    // A glob that matches no file stays as written (bash's default, without
    // `nullglob`), so its own spelling is one of the words it may become.
    if unescaped(pattern) == text {
        return true;
    }
    let pat = tokens(pattern);
    let txt: Vec<char> = text.chars().collect();
    // Classic linear-time wildcard matching: remember the last `*` and how much of
    // the text it has absorbed, and backtrack only to there.
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < txt.len() {
        match pat.get(p) {
            Some(Token::Star) => {
                star = Some((p, t));
                p += 1;
            }
            Some(Token::Any) => {
                p += 1;
                t += 1;
            }
            Some(Token::Char(c)) if *c == txt[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pat[p..].iter().all(|tok| *tok == Token::Star)
}

/// The pattern as bash would pass it on when nothing matches: escapes removed.
fn unescaped(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Star,
    /// `?` or a bracket expression.
    Any,
    Char(char),
}

fn tokens(pattern: &str) -> Vec<Token> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if let Some(&c) = chars.get(i + 1) {
                    out.push(Token::Char(c));
                }
                i += 2;
            }
            '*' => {
                // Consecutive stars are one star; this also keeps matching linear.
                if out.last() != Some(&Token::Star) {
                    out.push(Token::Star);
                }
                i += 1;
            }
            '?' => {
                out.push(Token::Any);
                i += 1;
            }
            '[' => match bracket_end(&chars, i) {
                Some(end) => {
                    out.push(Token::Any);
                    i = end + 1;
                }
                // An unclosed `[` is an ordinary character to bash.
                None => {
                    out.push(Token::Char('['));
                    i += 1;
                }
            },
            c => {
                out.push(Token::Char(c));
                i += 1;
            }
        }
    }
    out
}

/// The index of the `]` closing the bracket expression opened at `open`.
fn bracket_end(chars: &[char], open: usize) -> Option<usize> {
    let mut i = open + 1;
    if matches!(chars.get(i), Some('!') | Some('^')) {
        i += 1;
    }
    // A `]` right after the opening (or its negation) is a member, not the end.
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            ']' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod unit {
    use super::may_match;

    #[test]
    fn globs() {
        assert!(may_match("pus?", "push"));
        assert!(may_match("p*", "push"));
        assert!(may_match("*", ""));
        assert!(may_match("[a-z]ush", "push"));
        assert!(may_match("*.rs", "main.rs"));
        assert!(!may_match("*.rs", "-rf"));
        assert!(!may_match("\\*", "push"));
        assert!(may_match("\\*", "*"));
        // An unmatched glob is passed on as written.
        assert!(may_match("z[abc]?", "z[abc]?"));
        assert!(may_match("[", "["));
        assert!(!may_match("a?", "a"));
        assert!(may_match("a*b*c", "aXbYbZc"));
        assert!(!may_match("a*b*c", "aXbYbZ"));
    }
}
