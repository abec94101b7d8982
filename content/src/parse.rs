//! Markdown to [`Doc`], with the app's directives.
//!
//! The subset: one `#` title; `##` to `####` headings (an id from `{#id}` or from the text);
//! paragraphs; **strong**, *emphasis* and `code`; links to app paths (`/size/fleet`, written
//! with a leading slash and stored without it); flat lists; tables; block quotes (asides).
//! Directives: `{fig question/step}` and `{input question/name}` inside text, and a paragraph
//! that is only `{{kind arg ...}}` for a widget. Anything else (raw HTML, images, code blocks,
//! nested lists, links off the site, a stray brace) is an error naming its line, so a typo
//! cannot ship as literal text.

use crate::doc::{Block, Doc, Inline};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Parses one content file. Every problem found is reported, each with its line number.
pub fn parse(src: &str) -> Result<Doc, Vec<String>> {
    let mut p = State::default();
    let opts = Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES;
    for (event, range) in Parser::new_ext(src, opts).into_offset_iter() {
        p.line = 1 + src[..range.start].matches('\n').count();
        p.event(event);
    }
    if p.title.is_none() {
        p.err("the file needs one `# Title` line".into());
    }
    if p.errors.is_empty() {
        Ok(Doc {
            title: p.title.unwrap_or_default(),
            blocks: p.blocks.pop().unwrap_or_default(),
        })
    } else {
        Err(p.errors)
    }
}

/// What an open inline run belongs to.
enum Run {
    Paragraph,
    Heading(u8, Option<String>),
    Item,
    Cell,
    Strong,
    Em,
    Link(String),
}

/// A table being read: head cells, rows so far, the row being read.
type OpenTable = (Vec<Cell>, Vec<Vec<Cell>>, Vec<Cell>);
type Cell = Vec<Inline>;

struct State {
    line: usize,
    errors: Vec<String>,
    title: Option<Vec<Inline>>,
    /// Open block containers: the document, then one per open aside.
    blocks: Vec<Vec<Block>>,
    /// Open inline runs, innermost last.
    runs: Vec<(Run, Vec<Inline>)>,
    /// The open list: ordered, items so far.
    list: Option<(bool, Vec<Vec<Inline>>)>,
    /// The open table: head cells, rows, the row being read.
    table: Option<OpenTable>,
    in_head: bool,
    /// Depth of constructs we reject, whose content is skipped.
    skipping: usize,
}

impl Default for State {
    fn default() -> State {
        State {
            line: 1,
            errors: Vec::new(),
            title: None,
            blocks: vec![Vec::new()],
            runs: Vec::new(),
            list: None,
            table: None,
            in_head: false,
            skipping: 0,
        }
    }
}

impl State {
    fn err(&mut self, msg: String) {
        self.errors.push(format!("line {}: {msg}", self.line));
    }

    fn push_block(&mut self, b: Block) {
        if let Some(top) = self.blocks.last_mut() {
            top.push(b);
        }
    }

    fn push_inline(&mut self, i: Inline) {
        match self.runs.last_mut() {
            Some((_, text)) => text.push(i),
            None => self.err("text outside a paragraph, heading, list item or table cell".into()),
        }
    }

    fn event(&mut self, event: Event) {
        if self.skipping > 0 {
            match event {
                Event::Start(_) => self.skipping += 1,
                Event::End(_) => self.skipping -= 1,
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.push_inline(Inline::Text {
                text: t.into_string(),
            }),
            Event::Code(t) => self.push_inline(Inline::Code {
                text: t.into_string(),
            }),
            Event::SoftBreak => self.push_inline(Inline::Text { text: " ".into() }),
            Event::HardBreak => self.err("a hard line break: end the line plainly".into()),
            Event::Html(_) | Event::InlineHtml(_) => self.err("raw HTML is not allowed".into()),
            Event::Rule => {}
            other => self.err(format!("unsupported Markdown: {other:?}")),
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Paragraph => {
                // A tight list item's text comes without a paragraph; a loose one's with it.
                if !matches!(self.runs.last(), Some((Run::Item, _))) {
                    self.runs.push((Run::Paragraph, Vec::new()));
                }
            }
            Tag::Heading { level, id, .. } => {
                let level = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    _ => {
                        self.err("headings go down to level 4 (####)".into());
                        4
                    }
                };
                self.runs
                    .push((Run::Heading(level, id.map(|i| i.into_string())), Vec::new()));
            }
            Tag::Strong => self.runs.push((Run::Strong, Vec::new())),
            Tag::Emphasis => self.runs.push((Run::Em, Vec::new())),
            Tag::Link { dest_url, .. } => {
                let url = dest_url.into_string();
                match url.strip_prefix('/') {
                    Some(rel) if !url.starts_with("//") => {
                        self.runs.push((Run::Link(rel.to_string()), Vec::new()))
                    }
                    _ => {
                        self.err(format!(
                            "link `{url}`: links go to pages of the app, written from the root (/size/fleet)"
                        ));
                        self.skipping = 1;
                    }
                }
            }
            Tag::List(start) => {
                if self.list.is_some() {
                    self.err("nested lists are not supported".into());
                    self.skipping = 1;
                } else {
                    self.list = Some((start.is_some(), Vec::new()));
                }
            }
            Tag::Item => self.runs.push((Run::Item, Vec::new())),
            Tag::Table(_) => self.table = Some((Vec::new(), Vec::new(), Vec::new())),
            Tag::TableHead => self.in_head = true,
            Tag::TableRow => {}
            Tag::TableCell => self.runs.push((Run::Cell, Vec::new())),
            Tag::BlockQuote(_) => self.blocks.push(Vec::new()),
            other => {
                self.err(format!("unsupported Markdown: {other:?}"));
                self.skipping = 1;
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                if matches!(self.runs.last(), Some((Run::Item, _))) {
                    return;
                }
                let Some((_, text)) = self.runs.pop() else {
                    return;
                };
                let text = self.directives(text);
                match widget(&text) {
                    Some(Ok(b)) => self.push_block(b),
                    Some(Err(e)) => self.err(e),
                    None => self.push_block(Block::Paragraph { text }),
                }
            }
            TagEnd::Heading(_) => {
                let Some((Run::Heading(level, id), text)) = self.runs.pop() else {
                    return;
                };
                let text = self.directives(text);
                if level == 1 {
                    if self.title.is_some() {
                        self.err("a second `#` title: a file has one".into());
                    }
                    self.title = Some(text);
                } else {
                    let id = id.unwrap_or_else(|| slug(&crate::doc::plain(&text)));
                    self.push_block(Block::Heading { level, id, text });
                }
            }
            TagEnd::Strong | TagEnd::Emphasis | TagEnd::Link => {
                let Some((run, text)) = self.runs.pop() else {
                    return;
                };
                let text = self.directives(text);
                let i = match run {
                    Run::Strong => Inline::Strong { text },
                    Run::Em => Inline::Em { text },
                    Run::Link(to) => Inline::Link { to, text },
                    _ => return,
                };
                self.push_inline(i);
            }
            TagEnd::Item => {
                let Some((_, text)) = self.runs.pop() else {
                    return;
                };
                let text = self.directives(text);
                if let Some((_, items)) = self.list.as_mut() {
                    items.push(text);
                }
            }
            TagEnd::List(_) => {
                if let Some((ordered, items)) = self.list.take() {
                    self.push_block(Block::List { ordered, items });
                }
            }
            TagEnd::TableCell => {
                let Some((_, text)) = self.runs.pop() else {
                    return;
                };
                let text = self.directives(text);
                let in_head = self.in_head;
                if let Some((head, _, row)) = self.table.as_mut() {
                    if in_head {
                        head.push(text);
                    } else {
                        row.push(text);
                    }
                }
            }
            TagEnd::TableHead => self.in_head = false,
            TagEnd::TableRow => {
                if let Some((_, rows, row)) = self.table.as_mut() {
                    rows.push(std::mem::take(row));
                }
            }
            TagEnd::Table => {
                if let Some((head, rows, _)) = self.table.take() {
                    self.push_block(Block::Table { head, rows });
                }
            }
            TagEnd::BlockQuote(_) if self.blocks.len() > 1 => {
                let blocks = self.blocks.pop().unwrap_or_default();
                self.push_block(Block::Aside { blocks });
            }
            _ => {}
        }
    }

    /// Merges adjacent text and turns `{fig q/s}` and `{input q/n}` into directives.
    fn directives(&mut self, text: Vec<Inline>) -> Vec<Inline> {
        let mut merged: Vec<Inline> = Vec::new();
        for i in text {
            match (merged.last_mut(), i) {
                (Some(Inline::Text { text: a }), Inline::Text { text: b }) => a.push_str(&b),
                (_, i) => merged.push(i),
            }
        }
        let mut out = Vec::new();
        for i in merged {
            let Inline::Text { text } = i else {
                out.push(i);
                continue;
            };
            // A widget paragraph is read whole by `widget`.
            if text.trim_start().starts_with("{{") {
                out.push(Inline::Text { text });
                continue;
            }
            let mut rest = text.as_str();
            while let Some(open) = rest.find('{') {
                if open > 0 {
                    out.push(Inline::Text {
                        text: rest[..open].to_string(),
                    });
                }
                let Some(close) = rest[open..].find('}') else {
                    self.err(format!("`{{` without `}}` in “{rest}”"));
                    rest = "";
                    break;
                };
                let body = &rest[open + 1..open + close];
                match directive(body) {
                    Ok(d) => out.push(d),
                    Err(e) => self.err(e),
                }
                rest = &rest[open + close + 1..];
            }
            if rest.contains('}') {
                self.err(format!("a stray `}}` in “{rest}”"));
            }
            if !rest.is_empty() {
                out.push(Inline::Text {
                    text: rest.to_string(),
                });
            }
        }
        out
    }
}

/// An inline directive from the text between its braces.
fn directive(body: &str) -> Result<Inline, String> {
    let (kind, arg) = body.trim().split_once(' ').unwrap_or((body.trim(), ""));
    let (a, b) = arg.trim().split_once('/').unwrap_or(("", ""));
    let bad = |a: &str| a.is_empty() || !a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if bad(a) || bad(b) {
        return Err(format!(
            "`{{{body}}}`: a directive is `{{fig question/step}}`, `{{input question/name}}` or `{{say question/id}}`"
        ));
    }
    let (a, b) = (a.to_string(), b.to_string());
    match kind {
        "fig" => Ok(Inline::Figure {
            question: a,
            step: b,
        }),
        "input" => Ok(Inline::Input {
            question: a,
            name: b,
        }),
        "say" => Ok(Inline::Say { question: a, id: b }),
        other => Err(format!(
            "`{{{body}}}`: unknown directive `{other}` (known: fig, input, say)"
        )),
    }
}

/// A widget block, when the paragraph is only `{{kind arg ...}}`.
fn widget(text: &[Inline]) -> Option<Result<Block, String>> {
    let [Inline::Text { text }] = text else {
        return None;
    };
    let t = text.trim();
    let inner = t.strip_prefix("{{")?;
    let Some(inner) = inner.strip_suffix("}}") else {
        return Some(Err(format!(
            "`{t}`: a widget is a paragraph of its own, `{{{{kind args}}}}`"
        )));
    };
    let mut words = inner.split_whitespace().map(str::to_string);
    match words.next() {
        Some(kind) => Some(Ok(Block::Widget {
            kind,
            args: words.collect(),
        })),
        None => Some(Err("an empty widget `{{}}`".into())),
    }
}

/// A heading's id from its text: lower case, words joined by hyphens.
pub fn slug(text: &str) -> String {
    let mut s = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            s.extend(c.to_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(src: &str) -> Doc {
        parse(src).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn a_file_reads_as_blocks_with_directives() {
        let d = doc(
            "# Title\n\n## Size it {#size}\n\nWe need {fig fleet/replicas} replicas at \
                     {input fleet/rate}, see [the step](/size/fleet#step-replicas).\n\n\
                     {{estimate fleet replicas}}\n\n- one\n- **two**\n\n> Takeaway.\n",
        );
        assert_eq!(crate::doc::plain(&d.title), "Title");
        assert_eq!(
            d.blocks[0],
            Block::Heading {
                level: 2,
                id: "size".into(),
                text: vec![Inline::Text {
                    text: "Size it".into()
                }]
            }
        );
        let Block::Paragraph { text } = &d.blocks[1] else {
            panic!("{:?}", d.blocks[1])
        };
        assert_eq!(
            text[1],
            Inline::Figure {
                question: "fleet".into(),
                step: "replicas".into()
            }
        );
        assert_eq!(
            text[3],
            Inline::Input {
                question: "fleet".into(),
                name: "rate".into()
            }
        );
        assert!(matches!(&text[5], Inline::Link { to, .. } if to == "size/fleet#step-replicas"));
        assert_eq!(
            d.blocks[2],
            Block::Widget {
                kind: "estimate".into(),
                args: vec!["fleet".into(), "replicas".into()]
            }
        );
        assert!(matches!(&d.blocks[3], Block::List { ordered: false, items } if items.len() == 2));
        assert!(matches!(&d.blocks[4], Block::Aside { blocks } if blocks.len() == 1));
        assert_eq!(d.contents(), vec![("size".into(), "Size it".into())]);
    }

    #[test]
    fn a_say_directive_names_its_question_and_sentence() {
        let d = doc("# T\n\n**{say fleet/decode}** Every step reads the weights.\n");
        let Block::Paragraph { text } = &d.blocks[0] else {
            panic!()
        };
        let Inline::Strong { text } = &text[0] else {
            panic!("{text:?}")
        };
        assert_eq!(
            text[0],
            Inline::Say {
                question: "fleet".into(),
                id: "decode".into()
            }
        );
    }

    #[test]
    fn underscores_in_step_ids_survive_the_parser() {
        let d = doc("# T\n\nA {fig fleet/decode_step_time} step.\n");
        let Block::Paragraph { text } = &d.blocks[0] else {
            panic!()
        };
        assert!(text.contains(&Inline::Figure {
            question: "fleet".into(),
            step: "decode_step_time".into()
        }));
    }

    #[test]
    fn tables_keep_their_cells() {
        let d = doc("# T\n\n| a | b |\n|---|---|\n| 1 {fig q/s} | *x* |\n");
        let Block::Table { head, rows } = &d.blocks[0] else {
            panic!()
        };
        assert_eq!(head.len(), 2);
        assert_eq!(rows.len(), 1);
        assert!(rows[0][0]
            .iter()
            .any(|i| matches!(i, Inline::Figure { .. })));
    }

    #[test]
    fn every_mistake_is_named_with_its_line() {
        for (src, needle) in [
            ("no title\n", "one `# Title`"),
            ("# T\n\n# U\n", "second `#` title"),
            ("# T\n\n{fig fleet}\n", "a directive is"),
            ("# T\n\n{chart x/y}\n", "unknown directive `chart`"),
            ("# T\n\nan open { brace\n", "without"),
            ("# T\n\na stray } brace\n", "stray"),
            ("# T\n\n[off](https://example.com)\n", "links go to pages"),
            ("# T\n\n<b>x</b>\n", "raw HTML"),
            ("# T\n\n![img](/a.png)\n", "unsupported"),
            ("# T\n\n```\ncode\n```\n", "unsupported"),
            ("# T\n\n- a\n  - b\n", "nested lists"),
            ("# T\n\n{{}}\n", "empty widget"),
        ] {
            let errs = parse(src).expect_err(src);
            assert!(
                errs.iter()
                    .any(|e| e.contains(needle) && e.starts_with("line ")),
                "{src:?} gave {errs:?}, wanted {needle:?}"
            );
        }
    }

    #[test]
    fn slugs_are_url_safe() {
        assert_eq!(slug("The strong answer, live!"), "the-strong-answer-live");
        assert_eq!(slug("Where is TTFT read?"), "where-is-ttft-read");
    }

    #[test]
    fn a_parsed_doc_survives_json() {
        let d = doc("# T\n\n## H\n\nText {fig a/b} and [l](/lab).\n\n{{probe ttft-gap}}\n");
        let json = serde_json::to_string(&d).unwrap();
        let back: Doc = serde_json::from_str(&json).unwrap();
        assert_eq!(d, back);
    }
}
