//! Parsing a command with tree-sitter-bash and collecting what policy needs: the
//! simple commands (with their words), substitutions, file redirections, syntax
//! errors, and anything that makes the command impossible to judge statically.
//!
//! The tree is walked with an explicit stack rather than recursion, because a
//! command such as `((((((...` produces a tree as deep as the input is long.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, ParseState, Parser, Tree};

use super::roots::{self, Code, Stdin, View};
use super::substitution::{scan, Construct, Mode};
use super::variables;
use super::words::{node_text, unescape_heredoc, word_of, word_of_parts, Word};

/// Wall-clock budget for one `check_command`, parsing and walking included. Typical
/// commands need microseconds; this bounds pathological input (the size limit alone
/// would not, if the grammar's error recovery ever went superlinear).
pub(crate) const TIME_BUDGET: Duration = Duration::from_millis(250);

/// How deep `bash -c "bash -c '...'"` / `eval` nesting is followed.
pub(crate) const MAX_NESTING: usize = 8;

/// One simple command (`git push origin`), the unit that policy rules match.
#[derive(Debug, Clone)]
pub(crate) struct SimpleCommand {
    /// The command as written (what a rule and a person read).
    pub text: String,
    pub words: Vec<Word>,
    /// `views[0]` is the whole command; more for wrapped commands (`sudo rm x` has
    /// `rm x` too) and an empty view with `then_anything` for code we cannot see.
    pub views: Vec<View>,
}

#[derive(Debug, Default)]
pub(crate) struct Analysis {
    pub commands: Vec<SimpleCommand>,
    /// Constructs that execute during expansion, in order of discovery, deduplicated.
    pub substitutions: Vec<Construct>,
    pub has_redirection: bool,
    /// The first syntax error, described for a person.
    pub syntax_error: Option<String>,
    /// Reasons the command cannot be fully judged (hidden code, limits hit).
    pub hazards: Vec<String>,
}

pub(crate) fn analyze(command: &str) -> Analysis {
    let mut analyzer = Analyzer {
        out: Analysis::default(),
        deadline: Instant::now() + TIME_BUDGET,
    };
    analyzer.script(command, 0);
    analyzer.out
}

thread_local! {
    // Creating a parser and loading the grammar costs more than parsing a typical
    // command, so each thread keeps one.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
    Some(parser)
}

/// Parses `text`, giving up (with a reason) at `deadline`.
fn parse(text: &str, deadline: Instant) -> Result<Tree, &'static str> {
    // tree-sitter-bash's scanner passes the lookahead character, a Unicode code point,
    // to C's `isdigit`/`isalpha`, which are defined only up to 255: some non-ASCII
    // input read past glibc's table and crashed the process (found by the property
    // tests). Bash treats every non-ASCII byte as an ordinary word character, so the
    // grammar sees each one as `x`: same structure, same byte offsets (node text is
    // still cut from the original), and only ASCII ever reaches those C functions.
    let ascii: Vec<u8> = text.bytes().map(|b| if b.is_ascii() { b } else { b'x' }).collect();
    let run = |parser: &mut Parser| {
        let bytes = ascii.as_slice();
        let mut past_deadline = |_: &ParseState| Instant::now() > deadline;
        let options = ParseOptions::new().progress_callback(&mut past_deadline);
        let tree = parser.parse_with_options(&mut |i, _| bytes.get(i..).unwrap_or_default(), None, Some(options));
        if tree.is_none() {
            // A cancelled parse would otherwise resume on the next call.
            parser.reset();
        }
        tree.ok_or("the command took too long to analyse")
    };
    PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = new_parser();
            }
            match slot.as_mut() {
                Some(parser) => run(parser),
                None => Err("the bash grammar could not be loaded"),
            }
        }
        // Not reachable today (nothing parses while holding the parser), but a
        // fresh parser is the correct answer if it ever is.
        Err(_) => new_parser()
            .ok_or("the bash grammar could not be loaded")
            .and_then(|mut p| run(&mut p)),
    })
}

/// Quoting context while walking down the tree.
#[derive(Clone, Copy, Default)]
struct Ctx<'t> {
    /// Inside `"..."`: leaves are expanded as double-quoted text.
    double_quoted: bool,
    /// Inside `${...}` that is itself inside double quotes, where single quotes do
    /// not quote (`"${x:-'$(id)'}"` runs `id`).
    expansion_in_double_quotes: bool,
    /// For the body of a `redirected_statement`: its here-document, which is the
    /// command's standard input.
    heredoc: Option<Node<'t>>,
}

struct Analyzer {
    out: Analysis,
    deadline: Instant,
}

impl Analyzer {
    fn hazard(&mut self, reason: String) {
        if !self.out.hazards.contains(&reason) {
            self.out.hazards.push(reason);
        }
    }

    fn substitution(&mut self, construct: Construct) {
        if !self.out.substitutions.contains(&construct) {
            self.out.substitutions.push(construct);
        }
    }

    /// Analyses one script: the command itself, or code found inside it.
    fn script(&mut self, text: &str, depth: usize) {
        if depth > MAX_NESTING {
            self.hazard(format!(
                "shell code nested more than {MAX_NESTING} levels deep (bash -c, eval) was not examined"
            ));
            // Still refuse substitutions in it, by the plain scanner.
            if let Some(c) = scan(text, Mode::Script) {
                self.substitution(c);
            }
            return;
        }
        let tree = match parse(text, self.deadline) {
            Ok(tree) => tree,
            Err(reason) => {
                self.hazard(reason.to_string());
                if let Some(c) = scan(text, Mode::Script) {
                    self.substitution(c);
                }
                return;
            }
        };
        let root = tree.root_node();
        if root.has_error() {
            // The tree's shape is not trustworthy around an error, so also look for
            // substitutions the way a quote-aware character scanner would.
            if let Some(c) = scan(text, Mode::Script) {
                self.substitution(c);
            }
        }
        if !self.walk(root, text, depth) {
            self.hazard("the command took too long to analyse".to_string());
            if let Some(c) = scan(text, Mode::Script) {
                self.substitution(c);
            }
        }
    }

    /// Walks the tree; false if it ran out of time.
    fn walk(&mut self, root: Node, src: &str, depth: usize) -> bool {
        let mut stack: Vec<(Node, Ctx)> = vec![(root, Ctx::default())];
        let mut visited = 0u32;
        while let Some((node, ctx)) = stack.pop() {
            visited = visited.wrapping_add(1);
            if visited.is_multiple_of(1024) && Instant::now() > self.deadline {
                return false;
            }
            if node.is_error() || node.is_missing() {
                self.syntax_error(node, src, depth);
            }
            let mut child_ctx = ctx;
            child_ctx.heredoc = None;
            let mut skip: Option<Node> = None;
            match node.kind() {
                "comment" => continue,
                "command_substitution" => {
                    let backtick = node.child(0).is_some_and(|c| c.kind() == "`");
                    self.substitution(if backtick {
                        Construct::Backtick
                    } else {
                        Construct::Dollar
                    });
                    // The inside is a fresh script with its own quoting.
                    child_ctx = Ctx::default();
                }
                "process_substitution" => {
                    let output = node.child(0).is_some_and(|c| c.kind() == ">(");
                    self.substitution(if output {
                        Construct::ProcessOut
                    } else {
                        Construct::ProcessIn
                    });
                    child_ctx = Ctx::default();
                }
                "expansion" => {
                    if is_prompt_expansion(node) {
                        self.substitution(Construct::Prompt);
                    }
                    child_ctx.expansion_in_double_quotes = ctx.double_quoted;
                }
                "string" | "translated_string" => {
                    child_ctx.double_quoted = true;
                    child_ctx.expansion_in_double_quotes = false;
                }
                "raw_string" => {
                    if ctx.expansion_in_double_quotes {
                        if let Some(c) = scan(node_text(node, src), Mode::DoubleQuoted) {
                            self.substitution(c);
                        }
                    }
                    continue;
                }
                "ansi_c_string" | "heredoc_start" | "heredoc_end" => continue,
                "heredoc_redirect" => skip = self.heredoc(node, src),
                // A body outside a `heredoc_redirect` (only in broken trees, e.g.
                // for `<<E"O"F`): quoted if the start before it says so, otherwise
                // scanned as expanded text.
                "heredoc_body" => {
                    let quoted = node
                        .prev_sibling()
                        .is_some_and(|s| s.kind() == "heredoc_start" && is_quoted_delimiter(s, src));
                    if !quoted {
                        if let Some(c) = scan(node_text(node, src), Mode::DoubleQuoted) {
                            self.substitution(c);
                        }
                    }
                    continue;
                }
                "redirected_statement" => {
                    // The last here-document is what the body reads on stdin.
                    let mut cursor = node.walk();
                    let heredoc = node
                        .children_by_field_name("redirect", &mut cursor)
                        .filter(|c| c.kind() == "heredoc_redirect")
                        .last();
                    if let Some(body) = node.child_by_field_name("body") {
                        let mut body_ctx = child_ctx;
                        body_ctx.heredoc = heredoc;
                        push_children(&mut stack, node, child_ctx, Some((body, body_ctx)), None);
                        continue;
                    }
                }
                "command" => self.command(node, src, ctx.heredoc, depth),
                "declaration_command" | "unset_command" => self.declaration(node, src, depth),
                "variable_assignment" => {
                    if let Some(name) = node.child_by_field_name("name") {
                        let name = node_text(name, src);
                        let base = name.split('[').next().unwrap_or(name);
                        self.check_variable(base);
                    }
                }
                "file_redirect" => {
                    if writes_file(node, src) {
                        self.out.has_redirection = true;
                    }
                }
                _ => {
                    if node.is_named() && node.child_count() == 0 {
                        // A leaf bash still expands. If it contains a substitution the
                        // grammar did not split out (it does not for `${x#$(id)}`),
                        // catch it here.
                        let mode = if ctx.double_quoted {
                            Mode::DoubleQuoted
                        } else {
                            Mode::Word
                        };
                        if let Some(c) = scan(node_text(node, src), mode) {
                            self.substitution(c);
                        }
                    }
                }
            }
            push_children(&mut stack, node, child_ctx, None, skip);
        }
        true
    }

    fn syntax_error(&mut self, node: Node, src: &str, depth: usize) {
        if self.out.syntax_error.is_some() {
            return;
        }
        let pos = node.start_position();
        let what = if node.is_missing() {
            format!("missing `{}`", node.kind())
        } else {
            let snippet: String = node_text(node, src).chars().take(30).collect();
            format!("unexpected `{}`", snippet.trim())
        };
        // Positions in code that a shell or `eval` runs are relative to that code.
        let place = if depth > 0 { " of nested shell code" } else { "" };
        self.out.syntax_error = Some(format!(
            "{what} at line {}, column {}{place}",
            pos.row + 1,
            pos.column + 1
        ));
    }

    /// Checks a here-document; returns its body, which the walk must not descend
    /// into (the grammar's parse of a body is unreliable, see substitution.rs).
    fn heredoc<'t>(&mut self, node: Node<'t>, src: &str) -> Option<Node<'t>> {
        let body = child_of_kind(node, "heredoc_body")?;
        if !heredoc_is_quoted(node, src) {
            if let Some(c) = scan(node_text(body, src), Mode::DoubleQuoted) {
                self.substitution(c);
            }
        }
        Some(body)
    }

    fn command(&mut self, node: Node, src: &str, heredoc: Option<Node>, depth: usize) {
        // A command with only assignments and redirections (`X=1 >f`) runs nothing.
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        // The grammar's error recovery can invent an empty command (`ls &&`); the
        // syntax error is already recorded.
        if name.is_missing() || name.start_byte() == name.end_byte() {
            return;
        }
        let mut cursor = node.walk();
        let mut parts = vec![name];
        parts.extend(node.children_by_field_name("argument", &mut cursor));
        let words = join_continued(&parts, src);
        let stdin = stdin_of(node, heredoc, src);
        self.add_command(node_text(node, src).trim(), words, &stdin, depth);
    }

    /// `export A=1`, `declare -i n`, `unset x`: builtins with their own node kinds.
    fn declaration(&mut self, node: Node, src: &str, depth: usize) {
        let mut cursor = node.walk();
        let words: Vec<Word> = node
            .children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .map(|c| word_of(c, src))
            .collect();
        if words.is_empty() {
            return;
        }
        self.add_command(node_text(node, src).trim(), words, &Stdin::Unknown, depth);
    }

    fn add_command(&mut self, text: &str, words: Vec<Word>, stdin: &Stdin, depth: usize) {
        let unwrapped = roots::unwrap(&words, stdin);
        for var in &unwrapped.assigned {
            self.check_variable(var);
        }
        if unwrapped.truncated {
            self.hazard(format!("more than {} nested wrapper commands", roots::MAX_VIEWS));
        }
        let mut views = unwrapped.views;
        let mut nested = Vec::new();
        for code in unwrapped.code {
            match code {
                Code::Script(s) => nested.push(s),
                Code::Unknown => views.push(View {
                    start: words.len(),
                    end: words.len(),
                    then_anything: true,
                }),
            }
        }
        self.out.commands.push(SimpleCommand {
            text: text.to_string(),
            words,
            views,
        });
        for script in nested {
            self.script(&script, depth + 1);
        }
    }

    fn check_variable(&mut self, name: &str) {
        if variables::runs_code(name) {
            self.hazard(format!(
                "it sets {name}, which can make bash or the program run code that is not in the command"
            ));
        }
    }
}

/// Words from argument nodes, joining nodes that touch or are separated only by
/// backslash-newlines: bash removes a line continuation before splitting words,
/// the grammar does not (and it splits `$"text"` in two).
fn join_continued(parts: &[Node], src: &str) -> Vec<Word> {
    let mut words = Vec::with_capacity(parts.len());
    let mut group_start = 0;
    for i in 1..=parts.len() {
        let joined = parts.get(i).is_some_and(|next| {
            let gap = src.get(parts[i - 1].end_byte()..next.start_byte()).unwrap_or(" ");
            // Nothing, or only continuations, between them: one word to bash.
            gap.split("\\\n").all(str::is_empty)
        });
        if !joined {
            words.push(word_of_parts(&parts[group_start..i], src));
            group_start = i;
        }
    }
    words
}

/// Pushes `node`'s children so that they pop in document order. `special` replaces
/// the context of one child; `skip` is left out.
fn push_children<'t>(
    stack: &mut Vec<(Node<'t>, Ctx<'t>)>,
    node: Node<'t>,
    ctx: Ctx<'t>,
    special: Option<(Node<'t>, Ctx<'t>)>,
    skip: Option<Node<'t>>,
) {
    let mut cursor = node.walk();
    let start = stack.len();
    for child in node.children(&mut cursor) {
        if skip == Some(child) {
            continue;
        }
        match special {
            Some((n, c)) if n == child => stack.push((child, c)),
            _ => stack.push((child, ctx)),
        }
    }
    stack[start..].reverse();
}

fn child_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    let found = node.children(&mut cursor).find(|c| c.kind() == kind);
    found
}

/// `<<'EOF'`, `<<"EOF"`, `<<\EOF`, `<<E"O"F`: any quoting of the delimiter turns
/// off expansion in the body.
fn heredoc_is_quoted(heredoc: Node, src: &str) -> bool {
    child_of_kind(heredoc, "heredoc_start").is_some_and(|s| is_quoted_delimiter(s, src))
}

fn is_quoted_delimiter(start: Node, src: &str) -> bool {
    node_text(start, src).contains(['\'', '"', '\\'])
}

/// The script a shell command would read on stdin, when the command line shows it.
fn stdin_of(command: Node, heredoc: Option<Node>, src: &str) -> Stdin {
    let mut cursor = command.walk();
    let herestring = command
        .children_by_field_name("redirect", &mut cursor)
        .filter(|r| r.kind() == "herestring_redirect")
        .last();
    if let Some(h) = herestring {
        // `<<< word`: the word's value plus a newline.
        let mut cursor = h.walk();
        let value = h.named_children(&mut cursor).last().map(|w| word_of(w, src));
        return match value.as_ref().and_then(Word::literal) {
            Some(s) => Stdin::Script(s.to_string()),
            None => Stdin::Unknown,
        };
    }
    if let Some(h) = heredoc {
        if let Some(body) = child_of_kind(h, "heredoc_body") {
            let text = node_text(body, src);
            // An unquoted body is expanded first: `\$(x)` reaches the shell as `$(x)`.
            return Stdin::Script(if heredoc_is_quoted(h, src) {
                text.to_string()
            } else {
                unescape_heredoc(text)
            });
        }
    }
    Stdin::Unknown
}

/// `${var@P}`: the `@` operator followed by `P`.
fn is_prompt_expansion(node: Node) -> bool {
    let mut cursor = node.walk();
    let kinds: Vec<&str> = node.children(&mut cursor).map(|c| c.kind()).collect();
    kinds.windows(2).any(|w| w == ["@", "P"])
}

/// Whether a redirection writes to a file (not `2>&1`, `>&-`, or `/dev/null`).
fn writes_file(node: Node, src: &str) -> bool {
    let mut cursor = node.walk();
    let Some(op) = node.children(&mut cursor).find(|c| !c.is_named()).map(|c| c.kind()) else {
        return false;
    };
    let dest = node.child_by_field_name("destination");
    let target = dest.map(|d| word_of(d, src));
    // Writing to these discards or passes output through; it changes no file.
    let harmless = matches!(
        target.as_ref().and_then(Word::literal),
        Some("/dev/null" | "/dev/stdout" | "/dev/stderr")
    );
    match op {
        ">" | ">>" | "&>" | "&>>" | ">|" => !harmless,
        // `>&2` duplicates a descriptor; `>& file` writes a file.
        ">&" => {
            let dup =
                dest.is_some_and(|d| d.kind() == "number") || target.as_ref().and_then(Word::literal) == Some("-");
            !dup && !harmless
        }
        _ => false,
    }
}
