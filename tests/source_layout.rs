//! The source layout's two rules, checked on the crate's own files:
//!
//! 1. **No circle of imports between the files of `src/`.** Each file's dependencies are the
//!    items its code names through `use crate::…`, `use super::…`, `use self::…`,
//!    `use child::…` and paths such as `super::x::Y` or `crate::a::b` in code, each resolved to
//!    the file that *defines* the item: a name a `mod.rs` (or `lib.rs`) re-exports resolves
//!    through the re-export to the file behind it, so a parent that only declares and re-exports
//!    its children is no link in any chain. A parent's re-export counts as its own dependency
//!    only where its own code uses the name. Comments, string literals and `#[cfg(test)]` items
//!    are not code.
//! 2. **No source file longer than [`MAX_LINES`] lines** (not counting `#[cfg(test)]` items)
//!    unless its module doc gives the reason in a line starting `//! Size:`.
//!
//! Both rules hold for the binding crate's files (`bindings/web/src/`) too, a tree of its own
//! (its `lib.rs` is its crate root). The npm package's JavaScript has the same two rules,
//! checked by `tests/js/source_layout.test.mjs`.
//!
//! The checker is tested on small made-up trees too (the `checker_*` tests), so a checker that
//! stopped seeing imports could not pass silently.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The longest a source file may be, in lines, without a `//! Size:` reason.
const MAX_LINES: usize = 450;

/// Source files by path relative to `src/` (`"engine/db.rs"`), with their text.
type Sources = BTreeMap<String, String>;

// ---------------------------------------------------------------------------------------------
// The rules, on the crate itself.

#[test]
fn src_has_no_circle_of_imports() {
    let graph = Graph::build(&crate_sources());
    let circles = graph.circles();
    assert!(
        circles.is_empty(),
        "files of src/ import each other in a circle (move the shared item down into a module \
         that both can use):\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_bindings_files_import_each_other_in_no_circle_and_none_is_long_without_a_reason() {
    let sources = sources_under("bindings/web/src");
    let circles = Graph::build(&sources).circles();
    assert!(
        circles.is_empty(),
        "files of bindings/web/src/ import each other in a circle:\n{}",
        circles.join("\n")
    );
    let long = long_files(&sources);
    assert!(
        long.is_empty(),
        "files of bindings/web/src/ over {MAX_LINES} lines without a `//! Size:` line:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_source_file_is_long_without_a_reason() {
    let long = long_files(&crate_sources());
    assert!(
        long.is_empty(),
        "source files over {MAX_LINES} lines (not counting #[cfg(test)] items) without a \
         `//! Size:` line saying why; split them or give the reason:\n{}",
        long.join("\n")
    );
}

/// Guards the guard: if the checker stopped resolving imports, the first test would pass on
/// anything. These dependencies are the spine of the engine and will not go away.
#[test]
fn the_graph_sees_the_engines_known_dependencies() {
    let graph = Graph::build(&crate_sources());
    for (from, to) in [
        ("engine/db/mod.rs", "engine/state.rs"),
        ("engine/state.rs", "engine/wal.rs"),
        ("engine/flush.rs", "engine/commit.rs"),
        ("engine/keys.rs", "error.rs"),
    ] {
        assert!(
            graph.edges.get(from).is_some_and(|e| e.contains_key(to)),
            "the checker no longer sees that {from} imports from {to}; edges of {from}: {:?}",
            graph.edges.get(from).map(|e| e.keys().collect::<Vec<_>>())
        );
    }
    let count: usize = graph.edges.values().map(BTreeMap::len).sum();
    assert!(count > 100, "only {count} file dependencies found in src/");
}

/// Prints every file's dependencies, with the path that makes each:
/// `cargo test --test source_layout -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_the_file_graph() {
    let graph = Graph::build(&crate_sources());
    for (f, e) in &graph.edges {
        println!("{f}");
        for (t, why) in e {
            println!("    -> {t} ({why})");
        }
    }
}

fn crate_sources() -> Sources {
    sources_under("src")
}

/// The `.rs` files of the crate whose root (`lib.rs`) is in `dir` (relative to the repository).
fn sources_under(dir: &str) -> Sources {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut sources = Sources::new();
    read_tree(&root, &root, &mut sources);
    assert!(
        sources.contains_key("lib.rs"),
        "no lib.rs under {}",
        root.display()
    );
    sources
}

fn read_tree(root: &Path, dir: &Path, out: &mut Sources) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            read_tree(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let rel = path.strip_prefix(root).expect("under src/");
            let rel: Vec<_> = rel
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            out.insert(rel.join("/"), text);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rule 2: long files.

/// `"file: N lines"` for every file over [`MAX_LINES`] code lines without a `//! Size:` line.
fn long_files(sources: &Sources) -> Vec<String> {
    let mut long = Vec::new();
    for (file, text) in sources {
        let lines = Code::parse(text).code_lines();
        let has_reason = text
            .lines()
            .any(|l| l.trim_start().starts_with("//! Size:"));
        if lines > MAX_LINES && !has_reason {
            long.push(format!("  {file}: {lines} lines"));
        }
    }
    long
}

// ---------------------------------------------------------------------------------------------
// Reading code: comments and literals blanked, `#[cfg(test)]` items cut out, tokens.

/// One file's code.
struct Code<'a> {
    text: &'a str,
    /// The text with comments, strings and char literals replaced by spaces (newlines kept), so
    /// byte offsets and line numbers are the original ones.
    blank: String,
    /// Byte ranges of `#[cfg(test)]` items, widened to whole lines.
    test_spans: Vec<(usize, usize)>,
    /// Tokens outside the test spans.
    tokens: Vec<Token>,
}

#[derive(Clone, Debug)]
struct Token {
    text: String,
    at: usize,
}

impl Token {
    fn is_ident(&self) -> bool {
        self.text
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
    }
}

impl<'a> Code<'a> {
    fn parse(text: &'a str) -> Self {
        let blank = blank_comments_and_literals(text);
        let all = tokenize(&blank);
        let test_spans = test_spans(&all, &blank);
        let tokens = all
            .into_iter()
            .filter(|t| !test_spans.iter().any(|(s, e)| (*s..*e).contains(&t.at)))
            .collect();
        Code {
            text,
            blank,
            test_spans,
            tokens,
        }
    }

    /// Lines of the file outside `#[cfg(test)]` items.
    fn code_lines(&self) -> usize {
        let mut count = 0;
        let mut start = 0;
        for line in self.text.split_inclusive('\n') {
            let end = start + line.len();
            let in_test = self
                .test_spans
                .iter()
                .any(|(s, e)| *s <= start && end <= *e);
            if !in_test {
                count += 1;
            }
            start = end;
        }
        count
    }

    fn line_of(&self, at: usize) -> usize {
        self.blank[..at].matches('\n').count() + 1
    }
}

/// `text` with every comment, string literal and char literal replaced by spaces, newlines kept.
fn blank_comments_and_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident_byte = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|c| *c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#"))
            && (i == 0 || !ident_byte(b[i - 1]) || b[i - 1] == b'b')
            && rest[1..].iter().find(|c| **c != b'#') == Some(&b'"')
        {
            // A raw string: r"…", r#"…"#, br#"…"#.
            let hashes = rest[1..].iter().take_while(|c| **c == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + 2 + hashes;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, i, end);
            i = end;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}', 'é'), or a lifetime ('a), which stays.
            let end = if rest.get(1) == Some(&b'\\') {
                rest[2..]
                    .iter()
                    .position(|c| *c == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else {
                let ch_len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch_len) == Some(&b'\'')).then_some(i + 2 + ch_len)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8: it only writes ASCII over whole chars")
}

/// Identifiers, `::`, and single punctuation characters, with their byte offsets.
fn tokenize(blank: &str) -> Vec<Token> {
    let b = blank.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // Numbers (`1u8`, `0x1F`) are kept: they are never a path's segment.
            tokens.push(Token {
                text: blank[start..i].to_string(),
                at: start,
            });
        } else if b[i..].starts_with(b"::") {
            tokens.push(Token {
                text: "::".into(),
                at: i,
            });
            i += 2;
        } else {
            let len = blank[i..].chars().next().map_or(1, char::len_utf8);
            tokens.push(Token {
                text: blank[i..i + len].to_string(),
                at: i,
            });
            i += len;
        }
    }
    tokens
}

/// The byte ranges of items marked `#[cfg(test)]` (attribute to end of item, widened to whole
/// lines).
fn test_spans(tokens: &[Token], blank: &str) -> Vec<(usize, usize)> {
    let texts: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
    let mut spans = Vec::new();
    let mut i = 0;
    while i + 6 < texts.len() {
        if texts[i..i + 7] != ["#", "[", "cfg", "(", "test", ")", "]"] {
            i += 1;
            continue;
        }
        let start = tokens[i].at;
        let mut j = i + 7;
        // Further attributes of the same item.
        while texts.get(j) == Some(&"#") && texts.get(j + 1) == Some(&"[") {
            j = skip_group(&texts, j + 1);
        }
        // The item: to a `;` outside brackets, or to the brace that closes its body.
        let mut depth = 0i32;
        let mut end = blank.len();
        while j < texts.len() {
            match texts[j] {
                "{" | "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        end = tokens[j].at + 1;
                        break;
                    }
                }
                ";" if depth == 0 => {
                    end = tokens[j].at + 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let line_start = blank[..start].rfind('\n').map_or(0, |p| p + 1);
        let start = if blank[line_start..start].trim().is_empty() {
            line_start
        } else {
            start
        };
        let end = blank[end..].find('\n').map_or(blank.len(), |p| end + p + 1);
        spans.push((start, end));
        i = j + 1;
    }
    spans
}

/// The index after the bracket group that opens at `open`.
fn skip_group(texts: &[&str], open: usize) -> usize {
    let mut depth = 0;
    for (k, t) in texts.iter().enumerate().skip(open) {
        match *t {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    texts.len()
}

// ---------------------------------------------------------------------------------------------
// Imports and paths.

/// One name a `use` brings in.
#[derive(Clone, Debug)]
struct UseItem {
    /// The path, as written (`["super", "state", "Inner"]`; for a glob, the module's path).
    path: Vec<String>,
    /// The name it binds (`None` for a glob).
    bound: Option<String>,
    /// `pub use` / `pub(…) use`: a re-export.
    reexport: bool,
    /// Where it is, for messages.
    at: usize,
}

/// A path in code (not in a `use`) that starts with `crate`, `super`, `self` or a module name.
#[derive(Clone, Debug)]
struct CodePath {
    path: Vec<String>,
    at: usize,
}

/// What one file imports and names.
struct FileInfo {
    uses: Vec<UseItem>,
    paths: Vec<CodePath>,
    /// Identifiers of the code outside `use` statements (to tell whether a re-export is used).
    idents: BTreeSet<String>,
    /// Names of the items the file defines itself.
    defines: BTreeSet<String>,
}

fn file_info(code: &Code<'_>) -> FileInfo {
    let t = &code.tokens;
    let text = |k: usize| t.get(k).map_or("", |tok| tok.text.as_str());
    let mut uses = Vec::new();
    let mut in_use = vec![false; t.len()];
    let mut i = 0;
    while i < t.len() {
        if t[i].text != "use" {
            i += 1;
            continue;
        }
        let reexport = text(i.wrapping_sub(1)) == "pub"
            || (text(i.wrapping_sub(1)) == ")" && {
                let open = (0..i).rev().find(|k| t[*k].text == "(");
                open.is_some_and(|o| text(o.wrapping_sub(1)) == "pub")
            });
        let start = i;
        let mut j = i + 1;
        let mut items = Vec::new();
        parse_use_tree(t, &mut j, Vec::new(), &mut items);
        while j < t.len() && t[j].text != ";" {
            j += 1;
        }
        for (path, bound) in items {
            uses.push(UseItem {
                path,
                bound,
                reexport,
                at: t[start].at,
            });
        }
        for flag in in_use.iter_mut().take(j + 1).skip(start) {
            *flag = true;
        }
        i = j + 1;
    }
    let mut paths = Vec::new();
    let mut idents = BTreeSet::new();
    for k in 0..t.len() {
        if in_use[k] || !t[k].is_ident() {
            continue;
        }
        idents.insert(t[k].text.clone());
        let starts_path = text(k + 1) == "::" && (k == 0 || t[k - 1].text != "::");
        if !starts_path {
            continue;
        }
        let mut path = vec![t[k].text.clone()];
        let mut j = k + 2;
        while j < t.len() && t[j].is_ident() {
            path.push(t[j].text.clone());
            if text(j + 1) == "::" && t.get(j + 2).is_some_and(Token::is_ident) {
                j += 2;
            } else {
                break;
            }
        }
        paths.push(CodePath { path, at: t[k].at });
    }
    let mut defines = BTreeSet::new();
    for k in 0..t.len().saturating_sub(1) {
        let kind = t[k].text.as_str();
        let is_item = matches!(
            kind,
            "fn" | "struct" | "enum" | "type" | "trait" | "const" | "static" | "mod" | "union"
        );
        if is_item && t[k + 1].is_ident() {
            defines.insert(t[k + 1].text.clone());
        }
        if kind == "macro_rules" && text(k + 1) == "!" {
            defines.insert(text(k + 2).to_string());
        }
    }
    FileInfo {
        uses,
        paths,
        idents,
        defines,
    }
}

/// Parse one use tree at `*i`, appending `(path, bound name)` for each name it brings in.
fn parse_use_tree(
    t: &[Token],
    i: &mut usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    if t.get(*i).is_some_and(|tok| tok.text == "::") {
        // `use ::name`: an extern crate.
        prefix.push("::".into());
        *i += 1;
    }
    while let Some(tok) = t.get(*i) {
        match tok.text.as_str() {
            "{" => {
                *i += 1;
                while t.get(*i).is_some_and(|tok| tok.text != "}") {
                    parse_use_tree(t, i, prefix.clone(), out);
                    if t.get(*i).is_some_and(|tok| tok.text == ",") {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            "*" => {
                *i += 1;
                out.push((prefix, None));
                return;
            }
            _ if tok.is_ident() => {
                let seg = tok.text.clone();
                *i += 1;
                if t.get(*i).is_some_and(|tok| tok.text == "::") {
                    prefix.push(seg);
                    *i += 1;
                    continue;
                }
                let mut bound = seg.clone();
                if t.get(*i).is_some_and(|tok| tok.text == "as") {
                    bound = t.get(*i + 1).map_or(bound, |tok| tok.text.clone());
                    *i += 2;
                }
                if seg == "self" {
                    if bound == "self" {
                        bound = prefix.last().cloned().unwrap_or_default();
                    }
                    out.push((prefix, Some(bound)));
                } else {
                    prefix.push(seg);
                    out.push((prefix, Some(bound)));
                }
                return;
            }
            _ => return,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The graph.

/// A module path (`["engine", "write"]`; the crate root is `[]`).
type ModPath = Vec<String>;

enum Resolved {
    /// The path names a module.
    Module(ModPath),
    /// The path names an item defined in this file.
    File(String),
}

struct Graph {
    /// File → file it depends on → why (the first path that makes it, with its line).
    edges: BTreeMap<String, BTreeMap<String, String>>,
}

struct Crate {
    modules: BTreeMap<ModPath, String>,
    infos: BTreeMap<String, FileInfo>,
}

fn module_path(file: &str) -> ModPath {
    let mut parts: Vec<String> = file.split('/').map(str::to_string).collect();
    let last = parts.pop().unwrap_or_default();
    match last.as_str() {
        "lib.rs" | "mod.rs" | "main.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_string()),
    }
    parts
}

impl Crate {
    fn file_of(&self, module: &ModPath) -> &str {
        &self.modules[module]
    }

    fn is_module(&self, module: &ModPath) -> bool {
        self.modules.contains_key(module)
    }

    /// The module a path written in `module` starts from, and the segments left after that.
    fn start<'p>(
        &self,
        module: &ModPath,
        aliases: &BTreeMap<String, ModPath>,
        path: &'p [String],
    ) -> Option<(ModPath, &'p [String])> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some((Vec::new(), &path[1..])),
            "self" => Some((module.clone(), &path[1..])),
            "super" => {
                let mut cur = module.clone();
                let mut k = 0;
                while path.get(k).is_some_and(|s| s == "super") {
                    cur.pop()?;
                    k += 1;
                }
                Some((cur, &path[k..]))
            }
            _ => {
                let mut child = module.clone();
                child.push(first.clone());
                if self.is_module(&child) {
                    Some((child, &path[1..]))
                } else {
                    aliases.get(first).map(|m| (m.clone(), &path[1..]))
                }
            }
        }
    }

    /// What `path`, written in `module`, names: a module, an item of this crate (in the file that
    /// defines it), or `None` for something outside the crate.
    fn resolve(
        &self,
        module: &ModPath,
        aliases: &BTreeMap<String, ModPath>,
        path: &[String],
        depth: usize,
    ) -> Option<Resolved> {
        let (mut cur, rest) = self.start(module, aliases, path)?;
        for seg in rest {
            let mut next = cur.clone();
            next.push(seg.clone());
            if self.is_module(&next) {
                cur = next;
                continue;
            }
            return self.resolve_item(&cur, seg, depth).map(Resolved::File);
        }
        Some(Resolved::Module(cur))
    }

    /// The file that defines `name` as seen in `module`: through the module's own imports and
    /// re-exports, else the module's file.
    fn resolve_item(&self, module: &ModPath, name: &str, depth: usize) -> Option<String> {
        let file = self.file_of(module);
        if depth > 16 {
            return Some(file.to_string());
        }
        let info = &self.infos[file];
        let no_aliases = BTreeMap::new();
        for u in &info.uses {
            if u.bound.as_deref() == Some(name) {
                return match self.resolve(module, &no_aliases, &u.path, depth + 1)? {
                    Resolved::File(f) => Some(f),
                    Resolved::Module(m) => Some(self.file_of(&m).to_string()),
                };
            }
        }
        if !info.defines.contains(name) {
            for u in info.uses.iter().filter(|u| u.bound.is_none()) {
                if let Some(Resolved::Module(m)) =
                    self.resolve(module, &no_aliases, &u.path, depth + 1)
                {
                    let target = &self.infos[self.file_of(&m)];
                    if target.defines.contains(name) {
                        return Some(self.file_of(&m).to_string());
                    }
                }
            }
        }
        Some(file.to_string())
    }
}

impl Graph {
    fn build(sources: &Sources) -> Graph {
        let codes: BTreeMap<&String, Code<'_>> =
            sources.iter().map(|(f, t)| (f, Code::parse(t))).collect();
        let krate = Crate {
            modules: sources
                .keys()
                .map(|f| (module_path(f), f.clone()))
                .collect(),
            infos: codes
                .iter()
                .map(|(f, c)| ((*f).clone(), file_info(c)))
                .collect(),
        };
        let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (file, code) in &codes {
            let module = module_path(file);
            let info = &krate.infos[file.as_str()];
            let mut aliases = BTreeMap::new();
            let mut deps: Vec<(String, usize, String)> = Vec::new();
            for u in &info.uses {
                let shown = u.path.join("::");
                match (
                    &u.bound,
                    krate.resolve(&module, &BTreeMap::new(), &u.path, 0),
                ) {
                    (_, None) => {}
                    (Some(name), Some(Resolved::Module(m))) => {
                        aliases.insert(name.clone(), m);
                    }
                    (None, Some(Resolved::Module(m))) => {
                        if !u.reexport {
                            deps.push((krate.file_of(&m).to_string(), u.at, shown + "::*"));
                        }
                    }
                    (Some(name), Some(Resolved::File(f))) => {
                        if !u.reexport || info.idents.contains(name) {
                            deps.push((f, u.at, shown));
                        }
                    }
                    (None, Some(Resolved::File(_))) => {}
                }
            }
            for p in &info.paths {
                if let Some(Resolved::File(f)) = krate.resolve(&module, &aliases, &p.path, 0) {
                    deps.push((f, p.at, p.path.join("::")));
                }
            }
            let out = edges.entry((*file).clone()).or_default();
            for (to, at, shown) in deps {
                if to != **file {
                    out.entry(to)
                        .or_insert_with(|| format!("line {}: {shown}", code.line_of(at)));
                }
            }
        }
        Graph { edges }
    }

    /// Every circle, one per group of files that all reach each other, as the group and a
    /// shortest circle through it: `a.rs -> b.rs (line 3: super::b::X) -> a.rs (line 9: …)`.
    fn circles(&self) -> Vec<String> {
        let reach: BTreeMap<&str, BTreeSet<&str>> = self
            .edges
            .keys()
            .map(|f| (f.as_str(), self.reachable(f)))
            .collect();
        let mut circles = Vec::new();
        let mut reported: BTreeSet<&str> = BTreeSet::new();
        for (start, from_start) in &reach {
            if reported.contains(start) || !from_start.contains(start) {
                continue;
            }
            let group: BTreeSet<&str> = from_start
                .iter()
                .copied()
                .filter(|f| reach.get(f).is_some_and(|r| r.contains(start)))
                .collect();
            let cycle = self.cycle_through(start).unwrap_or_default();
            let mut text = format!(
                "  {} files reach each other: {}\n  for example: {start}",
                group.len(),
                group.iter().copied().collect::<Vec<_>>().join(", ")
            );
            for pair in cycle.windows(2) {
                let why = &self.edges[&pair[0]][&pair[1]];
                text += &format!("\n    -> {} ({why})", pair[1]);
            }
            reported.extend(group);
            circles.push(text);
        }
        circles
    }

    /// The files `start` depends on, directly or not.
    fn reachable(&self, start: &str) -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start];
        while let Some(file) = stack.pop() {
            for next in self.edges.get(file).into_iter().flat_map(BTreeMap::keys) {
                if seen.insert(next.as_str()) {
                    stack.push(next);
                }
            }
        }
        seen
    }

    /// A shortest path from `start` back to itself, if there is one (breadth first).
    fn cycle_through(&self, start: &str) -> Option<Vec<String>> {
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(file) = queue.pop_front() {
            for next in self.edges.get(file).into_iter().flat_map(BTreeMap::keys) {
                if next == start {
                    let mut path = vec![file.to_string()];
                    let mut cur = file;
                    while cur != start {
                        cur = came_from[cur];
                        path.push(cur.to_string());
                    }
                    path.reverse();
                    path.push(start.to_string());
                    return Some(path);
                }
                if !came_from.contains_key(next.as_str()) && next != start {
                    came_from.insert(next, file);
                    queue.push_back(next);
                }
            }
        }
        None
    }
}

// ---------------------------------------------------------------------------------------------
// The checker on made-up trees.

fn tree(files: &[(&str, &str)]) -> Sources {
    files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect()
}

#[test]
fn checker_finds_a_circle_of_two_files() {
    let sources = tree(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "b.rs",
            "pub struct B;\nfn f(a: super::a::A) -> super::a::A { a }\n",
        ),
    ]);
    let circles = Graph::build(&sources).circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(
        circles[0].contains("a.rs") && circles[0].contains("b.rs"),
        "{circles:?}"
    );
    assert!(circles[0].contains("line 2: super::a::A"), "{circles:?}");
}

#[test]
fn checker_finds_a_circle_of_three_files_through_nested_modules() {
    let sources = tree(&[
        ("lib.rs", "mod e;\n"),
        ("e/mod.rs", "mod x;\nmod y;\nmod z;\n"),
        ("e/x.rs", "use super::y::Y;\npub struct X;\n"),
        ("e/y.rs", "use super::z::{self, Z};\npub struct Y;\n"),
        (
            "e/z.rs",
            "pub struct Z;\nimpl Z { fn f() { let _ = crate::e::x::X; } }\n",
        ),
    ]);
    let circles = Graph::build(&sources).circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
    for f in ["e/x.rs", "e/y.rs", "e/z.rs"] {
        assert!(circles[0].contains(f), "{circles:?}");
    }
}

#[test]
fn checker_resolves_re_exports_to_the_defining_file() {
    // `c.rs` names `X` through its parent's re-export, and `x.rs` imports from `c.rs`: that is
    // no circle through `mod.rs`, which only declares and re-exports.
    let sources = tree(&[
        ("lib.rs", "pub mod m;\npub use m::X;\n"),
        (
            "m/mod.rs",
            "mod c;\nmod x;\npub use c::C;\npub(crate) use x::X;\n",
        ),
        ("m/x.rs", "use super::c::C;\npub struct X(C);\n"),
        ("m/c.rs", "pub struct C;\n"),
        ("other.rs", "use crate::X;\nuse crate::m::C;\n"),
    ]);
    let graph = Graph::build(&sources);
    assert!(graph.circles().is_empty(), "{:?}", graph.circles());
    let deps: Vec<_> = graph.edges["other.rs"].keys().collect();
    assert_eq!(deps, ["m/c.rs", "m/x.rs"]);

    // But a child that imports an item its parent defines, while the parent's own code uses
    // the child, is a circle.
    let sources = tree(&[
        ("lib.rs", "mod m;\n"),
        (
            "m/mod.rs",
            "mod x;\nuse x::X;\npub struct Shared;\nfn f(_: X) {}\n",
        ),
        ("m/x.rs", "use super::Shared;\npub struct X(Shared);\n"),
    ]);
    assert_eq!(Graph::build(&sources).circles().len(), 1);

    // A re-export the parent's own code uses is the parent's dependency too.
    let sources = tree(&[
        ("lib.rs", "mod m;\n"),
        (
            "m/mod.rs",
            "mod x;\npub use x::X;\npub struct Shared;\nfn f(_: X) {}\n",
        ),
        ("m/x.rs", "use super::Shared;\npub struct X(Shared);\n"),
    ]);
    assert_eq!(Graph::build(&sources).circles().len(), 1);
}

#[test]
fn checker_ignores_comments_strings_and_test_items() {
    let sources = tree(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "b.rs",
            concat!(
                "//! See [`A`](super::a::A).\n",
                "pub struct B;\n",
                "/* use crate::a::A; /* nested */ crate::a::A */\n",
                "const S: &str = \"super::a::A\";\n",
                "const R: &str = r#\"crate::a::A \" \"#;\n",
                "const C: char = '\"';\n",
                "fn f<'a>(x: &'a str) -> &'a str { x }\n",
                "#[cfg(test)]\n",
                "mod tests {\n",
                "    use crate::a::A;\n",
                "    #[test]\n",
                "    fn t() { let _ = crate::a::A; }\n",
                "}\n",
                "#[cfg(test)]\n",
                "fn helper(a: crate::a::A) -> crate::a::A { a }\n",
            ),
        ),
    ]);
    let graph = Graph::build(&sources);
    assert!(graph.circles().is_empty(), "{:?}", graph.circles());
    assert!(graph.edges["b.rs"].is_empty(), "{:?}", graph.edges["b.rs"]);
}

#[test]
fn checker_counts_lines_without_test_items_and_wants_a_reason_for_long_files() {
    let body = "fn f() {}\n".repeat(MAX_LINES);
    let tests = format!(
        "#[cfg(test)]\nmod tests {{\n{}}}\n",
        "    fn g() {}\n".repeat(200)
    );
    let just_fits = format!("{body}{tests}");
    assert_eq!(Code::parse(&just_fits).code_lines(), MAX_LINES);
    let one_over = format!("//! A module.\n{body}{tests}");
    let with_reason = format!("//! A module.\n//! Size: one table, read top to bottom.\n{body}");
    let sources = tree(&[
        ("lib.rs", ""),
        ("fits.rs", &just_fits),
        ("over.rs", &one_over),
        ("reason.rs", &with_reason),
    ]);
    assert_eq!(
        long_files(&sources),
        [format!("  over.rs: {} lines", MAX_LINES + 1)]
    );
}
