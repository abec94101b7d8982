//! Each route's first paint as an HTML string: the frame (header, footer) and the top of the
//! page (eyebrow, heading, introduction) with the elements and classes the app draws, so the
//! app's first render replaces it without moving the layout.

use serde::Serialize;
use trainer_content::doc::{Block, Doc, Inline};
use trainer_content::route::{Route, Section};
use trainer_content::words::{fill, HomeWords, MomentsWords, SiteWords};
use trainer_course::lab::LabText;
use trainer_course::moments::Moment;
use trainer_course::sizing::{seed_words, Inputs, Question};
use trainer_course::text::format;
use trainer_course::validation::About;

/// Everything the first paints are drawn from, read once.
pub struct Site {
    words: SiteWords,
    home: HomeWords,
    moments_words: MomentsWords,
    lesson: Doc,
    lab: LabText,
    about: About,
    advisor: trainer_course::advisor::answer::Words,
    moments: Vec<Moment>,
}

/// One route's HTML file.
#[derive(Serialize)]
pub struct Page {
    /// Relative to the base, without slashes at either end ("" for home).
    pub path: String,
    /// The document's title, as the app sets it.
    pub title: String,
    /// The first paint: the body's content until the app takes over.
    pub boot: String,
}

#[derive(Serialize)]
struct Output {
    pages: Vec<Page>,
    unknown: Page,
    notice: String,
    manifest: Manifest,
}

/// The web app manifest's names.
#[derive(Serialize)]
struct Manifest {
    name: String,
    short_name: String,
}

fn toml<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T, String> {
    toml::from_str(text).map_err(|e| format!("content/{name}: {e}"))
}

impl Site {
    /// Reads the content files (embedded at compile time, so a changed file rebuilds this).
    pub fn load() -> Result<Site, String> {
        let lesson = trainer_content::parse::parse(include_str!("../../content/lesson.md"))
            .map_err(|e| format!("content/lesson.md: {}", e.join("; ")))?;
        Ok(Site {
            words: toml("site.toml", include_str!("../../content/site.toml"))?,
            home: toml("home.toml", include_str!("../../content/home.toml"))?,
            moments_words: toml(
                "moments-page.toml",
                include_str!("../../content/moments-page.toml"),
            )?,
            lesson,
            lab: trainer_course::lab::text().map_err(|e| e.to_string())?,
            about: trainer_course::validation::about().map_err(|e| e.to_string())?,
            advisor: trainer_course::advisor::answer::words().map_err(|e| e.to_string())?,
            moments: trainer_course::moments::moments().map_err(|e| e.to_string())?,
        })
    }

    /// Every route the app has.
    pub fn routes(&self) -> Vec<Route> {
        let questions: Vec<&str> = Question::ALL.iter().map(|q| q.id()).collect();
        let moments: Vec<&str> = self.moments.iter().map(|m| m.id.as_str()).collect();
        Route::all(&questions, &moments)
    }

    /// The JSON `tools/post-build.mjs` reads.
    pub fn json(&self) -> String {
        let pages = self
            .routes()
            .iter()
            .map(|r| Page {
                path: r.path(),
                title: r.title(),
                boot: self.frame(r, &self.main(r)),
            })
            .collect();
        let unknown = Route::NotFound(String::new());
        let w = &self.words;
        let out = Output {
            pages,
            unknown: Page {
                path: "404.html".into(),
                title: unknown.title(),
                boot: self.frame(
                    &unknown,
                    &format!(r#"<p class="boot">{}</p>"#, esc(&w.loading)),
                ),
            },
            notice: format!(
                r#"<template id="update-notice"><div class="notice update-notice" role="status" data-testid="update-notice"><span>{}</span> <button class="button" type="button" data-testid="update-reload">{}</button></div></template>"#,
                esc(&w.update_ready),
                esc(&w.update_reload)
            ),
            manifest: Manifest {
                name: Route::Home.title(),
                short_name: w.brand_name.clone(),
            },
        };
        serde_json::to_string(&out).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The header, `main` and the footer, inside the element the app removes when it starts.
    fn frame(&self, route: &Route, main: &str) -> String {
        let w = &self.words;
        let nav: String = Section::NAV
            .iter()
            .map(|s| {
                let current = !matches!(route, Route::NotFound(_) | Route::Simulator)
                    && route.section() == *s;
                format!(
                    r#"<li><a href="{}"{}>{}</a></li>"#,
                    href(&s.route()),
                    if current {
                        r#" aria-current="page""#
                    } else {
                        ""
                    },
                    esc(s.label())
                )
            })
            .collect();
        format!(
            concat!(
                r#"<div id="boot" class="boot-page" data-testid="boot">"#,
                r#"<header class="site-header"><div class="site-bar"><a href="./" class="brand">"#,
                r#"<span class="brand-mark" aria-hidden="true">⟶</span><span class="brand-name">{}</span><span class="brand-sub">{}</span></a>"#,
                r#"<nav aria-label="Main"><ul class="nav">{}</ul></nav></div></header>"#,
                r#"<main class="page">{}</main>"#,
                r#"<footer class="site-footer"><p>{}<a href="{}">{}</a></p></footer></div>"#
            ),
            esc(&w.brand_name),
            esc(&w.brand_sub),
            nav,
            main,
            esc(&w.footer),
            href(&Route::Simulator),
            esc(&w.footer_link),
        )
    }

    /// The top of the page: its eyebrow, heading and introduction.
    fn main(&self, route: &Route) -> String {
        let w = &self.words;
        let seed = seed_words();
        match route {
            Route::Home => head(
                "hero",
                Some(&self.home.eyebrow),
                &fill(&self.home.title, &seed),
                Some(("lede", &fill(&self.home.lede, &seed))),
            ),
            Route::Lesson => self.lesson(),
            Route::SizeIndex => head(
                "",
                Some(Section::Size.label()),
                &w.size_title,
                Some(("lede", &w.size_lede)),
            ),
            Route::Size(id) => match Question::from_id(id) {
                Some(q) => head(
                    "size",
                    Some(Section::Size.label()),
                    q.title(),
                    Some(("lede size-prompt", &q.prompt())),
                ),
                None => String::new(),
            },
            Route::BuildUps => head(
                "narrow",
                Some(Section::BuildUps.label()),
                &w.buildups_title,
                None,
            ),
            Route::BuildUp(id) => self.buildup(id),
            Route::Moments => {
                let m = &self.moments_words;
                head("", Some(&m.eyebrow), &m.eyebrow, Some(("lede", &m.lede)))
            }
            Route::Moment(id) => self.moment(id),
            Route::Lab => head(
                "lab",
                Some(Section::Lab.label()),
                &self.lab.title,
                Some(("lede", &self.lab.intro)),
            ),
            Route::Mock => head("mock", Some(Section::Mock.label()), &w.mock_title, None),
            Route::MockReport => head("narrow", None, &w.report_title, None),
            Route::Simulator => head(
                "simulator-page",
                None,
                &self.about.title,
                Some(("", &self.about.intro)),
            ),
            Route::Advisor => head(
                "lab advisor",
                Some(&self.advisor.eyebrow),
                &self.advisor.title,
                Some(("lede", &self.advisor.intro)),
            ),
            Route::NotFound(_) => String::new(),
        }
    }

    fn buildup(&self, id: &str) -> String {
        let Some(n) = trainer_content::buildup::IDS.iter().position(|b| *b == id) else {
            return String::new();
        };
        let text = match id {
            "replica" => include_str!("../../content/buildups/replica.toml"),
            "fleet" => include_str!("../../content/buildups/fleet.toml"),
            // A build-up without its file here has no first paint (the test names it).
            _ => return String::new(),
        };
        match toml::<trainer_content::buildup::Script>(&format!("buildups/{id}.toml"), text) {
            Ok(s) => head(
                "buildup",
                Some(&fill(
                    &self.words.buildup_eyebrow,
                    &[("n", (n + 1).to_string())],
                )),
                &s.title,
                Some(("lede", &s.intro)),
            ),
            Err(_) => String::new(),
        }
    }

    fn moment(&self, id: &str) -> String {
        let Some(m) = self.moments.iter().find(|m| m.id == id) else {
            return String::new();
        };
        let w = &self.moments_words;
        format!(
            r#"<section class="moment"><p class="eyebrow"><a href="{}">{}</a></p><h1>{}</h1><blockquote class="interviewer"><p class="muted">{}</p><p>{}</p></blockquote></section>"#,
            href(&Route::Moments),
            esc(&w.eyebrow),
            esc(&m.title),
            esc(&w.asks),
            esc(&m.prompt)
        )
    }

    /// The lesson's contents, title and first paragraph, at the seed's inputs.
    fn lesson(&self) -> String {
        let doc = &self.lesson;
        let toc: String = doc
            .contents()
            .into_iter()
            .map(|(id, text)| format!(r##"<li><a href="#{}">{}</a></li>"##, esc(&id), esc(&text)))
            .collect();
        let intro = doc.blocks.iter().find_map(|b| match b {
            Block::Paragraph { text } => Some(inlines(text)),
            _ => None,
        });
        format!(
            r#"<div class="lesson"><nav class="lesson-toc" aria-label="On this page"><p class="eyebrow">{}</p><ol>{}</ol></nav><article class="lesson-article"><p class="eyebrow">{}</p><h1>{}</h1>{}</article></div>"#,
            esc(&self.words.lesson_contents),
            toc,
            esc(&self.words.lesson_eyebrow),
            inlines(&doc.title),
            intro.map(|p| format!("<p>{p}</p>")).unwrap_or_default()
        )
    }
}

/// A section with an optional eyebrow, the heading and an optional paragraph (its classes,
/// its text).
fn head(class: &str, eyebrow: Option<&str>, title: &str, para: Option<(&str, &str)>) -> String {
    let class = if class.is_empty() {
        String::new()
    } else {
        format!(r#" class="{class}""#)
    };
    let eyebrow = eyebrow
        .map(|e| format!(r#"<p class="eyebrow">{}</p>"#, esc(e)))
        .unwrap_or_default();
    let para = para
        .map(|(c, t)| match c {
            "" => format!("<p>{}</p>", esc(t)),
            c => format!(r#"<p class="{c}">{}</p>"#, esc(t)),
        })
        .unwrap_or_default();
    format!(
        "<section{class}>{eyebrow}<h1>{}</h1>{para}</section>",
        esc(title)
    )
}

/// A route's href relative to the document's base ("./" for home).
fn href(route: &Route) -> String {
    match route.path() {
        p if p.is_empty() => "./".into(),
        p => esc(&p),
    }
}

/// A run of the lesson's text at the seed's inputs. A live figure or a concluding sentence
/// depends on the learner's inputs (and may be held back by an open estimate), so the first
/// paint shows an ellipsis where the app will put it.
fn inlines(text: &[Inline]) -> String {
    text.iter()
        .map(|i| match i {
            Inline::Text { text } => esc(text),
            Inline::Code { text } => format!("<code>{}</code>", esc(text)),
            Inline::Strong { text } => format!("<strong>{}</strong>", inlines(text)),
            Inline::Em { text } => format!("<em>{}</em>", inlines(text)),
            Inline::Link { to, text } => format!(
                r#"<a href="{}">{}</a>"#,
                esc(to.trim_start_matches('/')),
                inlines(text)
            ),
            Inline::Input { question, name } => Question::from_id(question)
                .map(|q| {
                    let inputs = Inputs::defaults(q);
                    inputs
                        .shown(q, name)
                        .unwrap_or_else(|| format::num(inputs.get(name).unwrap_or(0.0)))
                })
                .map(|v| esc(&v))
                .unwrap_or_default(),
            Inline::Figure { .. } | Inline::Say { .. } => "…".into(),
        })
        .collect()
}

/// Escapes text for an HTML element or a quoted attribute.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_has_a_page_with_its_heading_from_the_content() {
        let site = Site::load().expect("the content loads");
        let routes = site.routes();
        assert!(routes.contains(&Route::Size("fleet".into())));
        assert!(routes.contains(&Route::MockReport));
        for r in &routes {
            let main = site.main(r);
            assert_eq!(main.matches("<h1>").count(), 1, "{r:?}: {main}");
            assert!(!main.contains("<h1></h1>"), "{r:?}");
            assert!(
                !main.contains('{'),
                "{r:?} has an unfilled placeholder: {main}"
            );
        }
        assert!(site
            .main(&Route::Lab)
            .contains(&format!("<h1>{}</h1>", esc(&site.lab.title))));
        let q = Question::ALL[0];
        assert!(site
            .main(&Route::Size(q.id().into()))
            .contains(&esc(&q.prompt())));
        let json: serde_json::Value = serde_json::from_str(&site.json()).expect("JSON");
        assert_eq!(json["pages"].as_array().map(Vec::len), Some(routes.len()));
        assert_eq!(json["pages"][0]["path"], "");
    }

    #[test]
    fn text_is_escaped_and_the_current_section_is_marked() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let site = Site::load().expect("the content loads");
        let f = site.frame(&Route::Lab, "");
        assert!(f.contains(r#"<a href="lab" aria-current="page">"#), "{f}");
        assert_eq!(f.matches("aria-current").count(), 1);
        assert!(!site.frame(&Route::Simulator, "").contains("aria-current"));
    }
}
