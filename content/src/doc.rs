//! The document model: what a content file becomes once parsed, and what the app renders.

use serde::{Deserialize, Serialize};

/// One content file, parsed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    /// The file's one level-1 heading (it may hold live figures and inputs).
    pub title: Vec<Inline>,
    /// Everything after the title, in order.
    pub blocks: Vec<Block>,
}

/// A block of a document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Block {
    /// A section heading (levels 2 to 4), with an id for links and the table of contents.
    Heading {
        level: u8,
        id: String,
        text: Vec<Inline>,
    },
    Paragraph {
        text: Vec<Inline>,
    },
    /// A list; each item is one run of text.
    List {
        ordered: bool,
        items: Vec<Vec<Inline>>,
    },
    /// A table with a header row.
    Table {
        head: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
    },
    /// A takeaway box (a Markdown block quote).
    Aside {
        blocks: Vec<Block>,
    },
    /// A widget the app draws: a paragraph that is only `{{kind arg arg}}`.
    Widget {
        kind: String,
        args: Vec<String>,
    },
}

/// A run of text inside a block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inline {
    Text {
        text: String,
    },
    Strong {
        text: Vec<Inline>,
    },
    Em {
        text: Vec<Inline>,
    },
    Code {
        text: String,
    },
    /// A link inside the app: `to` is a path relative to the app's base, possibly with a
    /// query and a fragment (`size/fleet?reveal=all#step-replicas`).
    Link {
        to: String,
        text: Vec<Inline>,
    },
    /// `{fig question/step}`: a sizing step's value for the learner's inputs, linking to the step.
    Figure {
        question: String,
        step: String,
    },
    /// `{input question/name}`: the current value of one of a question's inputs.
    Input {
        question: String,
        name: String,
    },
    /// `{say question/id}`: a sentence that draws a conclusion from the figures, chosen by
    /// the sizing engine at the learner's inputs from the alternatives in
    /// `content/verdict.toml` (`[say]`).
    Say {
        question: String,
        id: String,
    },
}

impl Doc {
    /// Every block, nested ones (inside asides) included, in document order.
    pub fn all_blocks(&self) -> Vec<&Block> {
        fn walk<'a>(blocks: &'a [Block], out: &mut Vec<&'a Block>) {
            for b in blocks {
                out.push(b);
                if let Block::Aside { blocks } = b {
                    walk(blocks, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.blocks, &mut out);
        out
    }

    /// Every run of inline content, in document order.
    pub fn all_inlines(&self) -> Vec<&Inline> {
        fn walk<'a>(text: &'a [Inline], out: &mut Vec<&'a Inline>) {
            for i in text {
                out.push(i);
                match i {
                    Inline::Strong { text } | Inline::Em { text } | Inline::Link { text, .. } => {
                        walk(text, out)
                    }
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.title, &mut out);
        for b in self.all_blocks() {
            match b {
                Block::Heading { text, .. } | Block::Paragraph { text } => walk(text, &mut out),
                Block::List { items, .. } => items.iter().for_each(|i| walk(i, &mut out)),
                Block::Table { head, rows } => {
                    head.iter().for_each(|c| walk(c, &mut out));
                    rows.iter().flatten().for_each(|c| walk(c, &mut out));
                }
                Block::Aside { .. } | Block::Widget { .. } => {}
            }
        }
        out
    }

    /// The level-2 headings, as (id, plain text): the table of contents.
    pub fn contents(&self) -> Vec<(String, String)> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Heading { level: 2, id, text } => Some((id.clone(), plain(text))),
                _ => None,
            })
            .collect()
    }
}

/// The text of some inline content without its markup (figures as their reference).
pub fn plain(text: &[Inline]) -> String {
    let mut s = String::new();
    for i in text {
        match i {
            Inline::Text { text } | Inline::Code { text } => s.push_str(text),
            Inline::Strong { text } | Inline::Em { text } | Inline::Link { text, .. } => {
                s.push_str(&plain(text))
            }
            Inline::Figure { question, step } => s.push_str(&format!("{{fig {question}/{step}}}")),
            Inline::Input { question, name } => s.push_str(&format!("{{input {question}/{name}}}")),
            Inline::Say { question, id } => s.push_str(&format!("{{say {question}/{id}}}")),
        }
    }
    s
}
