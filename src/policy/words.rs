//! What a word of a command will be once bash has expanded it.
//!
//! Policy rules compare words, so `'git' status`, `g"it" status` and `\git status`
//! must all be seen as `git status`, while `$CMD status` must be seen as "unknown"
//! rather than as the four characters `$CMD`.

use tree_sitter::Node;

/// One word of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The source text, as written.
    pub written: String,
    pub form: Form,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Form {
    /// Fully known: quotes removed, escapes resolved.
    Literal(String),
    /// An unquoted glob (`*.rs`, `pus?`): it becomes zero or more words, each
    /// matching `pattern` (quoted characters are backslash-escaped in it).
    Pattern { literal: String, pattern: String },
    /// Depends on run-time state (a variable, a substitution, brace expansion...).
    /// `splits` is true when it is unquoted, so it may become any number of words.
    Unknown { splits: bool },
}

impl Word {
    pub(crate) fn literal(&self) -> Option<&str> {
        match &self.form {
            Form::Literal(s) => Some(s),
            _ => None,
        }
    }

    /// How the word is shown as a command root: the expanded text where it is
    /// known, otherwise the text as written.
    pub(crate) fn display(&self) -> &str {
        match &self.form {
            Form::Literal(s) => s,
            Form::Pattern { literal, .. } => literal,
            Form::Unknown { .. } => &self.written,
        }
    }
}

/// The text of a node, or "" if its range is not valid UTF-8 boundaries (tree-sitter
/// may cut inside a multi-byte character in an error region).
pub(crate) fn node_text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// Builds the [`Word`] for a node in argument position.
pub(crate) fn word_of(node: Node, src: &str) -> Word {
    word_of_parts(&[node], src)
}

/// Builds one [`Word`] from adjacent nodes that bash reads as a single word (the
/// grammar splits `r\<newline>m` in two; bash runs `rm`).
pub(crate) fn word_of_parts(nodes: &[Node], src: &str) -> Word {
    let mut b = Builder::default();
    for node in nodes {
        b.add(*node, src, false);
    }
    let written = match (nodes.first(), nodes.last()) {
        (Some(first), Some(last)) => src.get(first.start_byte()..last.end_byte()).unwrap_or(""),
        _ => "",
    }
    .to_string();
    let form = if b.unknown {
        Form::Unknown { splits: b.splits }
    } else if b.brace_open && b.brace_close && (b.comma || b.lit.contains("..")) {
        // `{a,b}` / `{1..3}`: brace expansion makes several words.
        Form::Unknown { splits: true }
    } else if b.glob {
        Form::Pattern {
            literal: b.lit,
            pattern: b.pat,
        }
    } else {
        Form::Literal(b.lit)
    };
    Word { written, form }
}

#[derive(Default)]
struct Builder {
    /// The value after quote removal.
    lit: String,
    /// The same, as a glob pattern: quoted characters escaped with a backslash.
    pat: String,
    glob: bool,
    unknown: bool,
    splits: bool,
    brace_open: bool,
    brace_close: bool,
    comma: bool,
}

impl Builder {
    fn add(&mut self, node: Node, src: &str, in_double_quotes: bool) {
        let text = node_text(node, src);
        if !node.is_named() {
            // Punctuation such as the `=` of an assignment, or a keyword.
            self.unquoted(text);
            return;
        }
        match node.kind() {
            "word" | "variable_name" | "extglob_pattern" | "special_variable_name" => self.unquoted(text),
            // A number may hold a substitution (`0x$(id)`); only a bare one is literal.
            "number" if node.named_child_count() == 0 => self.unquoted(text),
            "raw_string" => {
                let inner = text.strip_prefix('\'').unwrap_or(text);
                let inner = inner.strip_suffix('\'').unwrap_or(inner);
                self.quoted(inner);
            }
            "ansi_c_string" => {
                let inner = text.strip_prefix("$'").unwrap_or(text);
                let inner = inner.strip_suffix('\'').unwrap_or(inner);
                if inner.contains('\\') {
                    // `$'\x72\x6d'` is `rm`; rather than decode every escape we call
                    // it unknown, which can only make a decision stricter.
                    self.unknown = true;
                } else {
                    self.quoted(inner);
                }
            }
            "string" | "translated_string" => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.add(child, src, true);
                }
            }
            "string_content" => self.quoted(&unescape_double_quoted(text)),
            "concatenation" | "command_name" | "variable_assignment" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    self.add(child, src, in_double_quotes);
                }
            }
            // Anything else (expansions, substitutions, brace expressions, error
            // nodes) is only known at run time.
            _ => {
                self.unknown = true;
                if !in_double_quotes {
                    self.splits = true;
                }
            }
        }
    }

    /// Unquoted text: backslash escapes, globs and braces are live.
    fn unquoted(&mut self, text: &str) {
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    // A backslash-newline is a line continuation: it disappears.
                    Some('\n') | None => {}
                    Some(e) => {
                        self.lit.push(e);
                        self.pat.push('\\');
                        self.pat.push(e);
                    }
                },
                '*' | '?' | '[' => {
                    self.glob = true;
                    self.lit.push(c);
                    self.pat.push(c);
                }
                // An unquoted parenthesis inside a word is an extglob (`@(a|b)`).
                '(' | ')' => {
                    self.unknown = true;
                    self.splits = true;
                }
                _ => {
                    match c {
                        '{' => self.brace_open = true,
                        '}' => self.brace_close = true,
                        ',' => self.comma = true,
                        _ => {}
                    }
                    self.lit.push(c);
                    self.pat.push(c);
                }
            }
        }
    }

    /// Quoted text: every character is literal.
    fn quoted(&mut self, text: &str) {
        for c in text.chars() {
            self.lit.push(c);
            self.pat.push('\\');
            self.pat.push(c);
        }
    }
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
pub(crate) fn unescape_double_quoted(text: &str) -> String {
    unescape(text, &['$', '`', '"', '\\'])
}

/// In an unquoted here-document body a backslash escapes `$`, `` ` `` and `\` (and
/// newline), but not `"`.
pub(crate) fn unescape_heredoc(text: &str) -> String {
    unescape(text, &['$', '`', '\\'])
}

fn unescape(text: &str, escapable: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                    continue;
                }
                Some(n) if escapable.contains(n) => {
                    out.push(*n);
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}
