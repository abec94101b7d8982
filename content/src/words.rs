//! Sentences the app's widgets fill in with computed figures, read from a TOML file in
//! `content/` (`{name}` marks where a figure goes). The build refuses a file with a missing or
//! unknown key, so a widget never shows an empty string.

use serde::{Deserialize, Serialize};

/// The lesson's widget sentences (`content/lesson-words.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LessonWords {
    pub estimate_replicas: String,
    pub estimate_open_streams: String,
    pub estimate_kv_in_use: String,
    /// The roofline section's estimate boxes: the weight-read floor and the target's batch.
    pub estimate_weight_floor: String,
    pub estimate_tpot_batch: String,
    /// What the simulator's engine figure is, and why it differs (`{mbu}`, `{engine_mbu}`,
    /// `{overhead}`: the learner's MBU, the engine's, its fixed cost per step).
    pub sim_engine: String,
    pub gap_engine: String,
    /// Shown in place of the roofline plot while one of the section's estimates is open.
    pub roofline_waiting: String,
    pub derived_note: String,
    pub sim_replicas_holds: String,
    pub sim_replicas_fewer: String,
    pub sim_replicas_misses: String,
    pub sim_open_streams: String,
    pub sim_kv_in_use: String,
    pub gap_replicas: String,
    /// Added to `gap_replicas` when the check also ran one replica fewer.
    pub gap_fewer: String,
    /// By `trainer_course::sizing::StreamsGap`: `Sooner`, `NoFewer`, `Lost`.
    pub gap_open_streams: String,
    pub gap_open_streams_more: String,
    pub gap_open_streams_lost: String,
    pub gap_kv_in_use: String,
    /// `fewer_result` by `trainer_course::sizing::Fewer`.
    pub fewer_holds: String,
    pub fewer_misses: String,
    pub fewer_misses_too: String,
    pub probe_run: String,
    pub probe_running: String,
    pub probe_caption: String,
    pub probe_broken: String,
    pub probe_fixed: String,
    pub probe_ratio: String,
    /// The dashboard's button, its progress line, its caption and its column heads.
    pub dashboard_run: String,
    pub dashboard_running: String,
    pub dashboard_caption: String,
    pub dashboard_metric: String,
    pub dashboard_meaning: String,
    pub dashboard_value: String,
    pub dashboard_alert: String,
    pub dashboard_lab: String,
    /// When the fixed design has none of the key figure and the broken one has some.
    pub probe_none: String,
    pub probe_prefill: String,
    pub probe_lab: String,
    pub sheet_title: String,
    pub sheet_print: String,
    pub sheet_load: String,
    pub sheet_engine: String,
    pub sheet_streams: String,
    pub sheet_clocks: String,
    pub sheet_clocks_text: String,
    pub sheet_probes: String,
    pub sheet_probe_gap: String,
    pub sheet_probe_stutter: String,
    pub sheet_probe_long: String,
    pub estimate_peek: String,
    pub hidden_figure: String,
    pub hidden_figure_label: String,
    pub sheet_hidden: String,
}

/// The sentences of the calculator's simulator check (`content/size-words.toml`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeWords {
    pub check_title: String,
    pub check_intro: String,
    pub check_button: String,
    pub check_running: String,
    /// The simulator refuses the inputs (`{reason}`: the field and what is wrong with it).
    pub check_refused: String,
    pub run_progress: String,
    pub wall_time: String,
    pub stale: String,
    pub targets: String,
    /// By `trainer_course::sizing::StreamsGap`: `Sooner` (with `streams_smaller_batch` when the
    /// simulated batch is smaller than the one assumed), `NoFewer`, `Lost`.
    pub streams_shorter: String,
    pub streams_smaller_batch: String,
    pub streams_longer: String,
    pub streams_lost: String,
    pub streams_simulated: String,
    pub streams_estimated: String,
    pub shortfall_at: String,
    pub shortfall_timed_out: String,
    pub shortfall_rejected: String,
    pub shortfall_stopped: String,
    pub shortfall_end: String,
    pub verdict_both: String,
    /// `verdict_both` for the halve-the-cost question, whose replica count is a budget.
    pub verdict_both_budget: String,
    /// The split question's check: how the replicas are split between the pools.
    pub check_split: String,
    pub verdict_smallest: String,
    pub verdict_even: String,
    pub itl_note: String,
    pub busy_note: String,
    pub differs_title: String,
    pub gap_kv_pool: String,
    pub gap_decode_step: String,
    pub gap_max_seqs: String,
    /// The banner over a replica that cannot hold its weights and a KV cache.
    pub misfit_kv: String,
    /// The banner over a chat longer than the whole KV pool.
    pub misfit_chat: String,
    /// What the banner says the field and its fix are.
    pub misfit_field: String,
    /// The banner's button that applies the fix.
    pub misfit_fix: String,
    /// The banner's button that opens the inputs at the field.
    pub misfit_go: String,
    /// The banner when no number of GPUs per replica fits.
    pub misfit_none: String,
    /// The inputs panel's one-line summary (what shows while it is folded on a phone).
    pub inputs_summary: String,
    /// The same when some fields need fixing.
    pub inputs_summary_errors: String,
    /// The tip under the step controls (the arrow key and where it works).
    pub steps_tip: String,
    /// The roofline plot (the roofline question and the lesson).
    pub roofline: RooflineWords,
}

/// The roofline plot's words (`[roofline]` of `content/size-words.toml`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RooflineWords {
    /// The section's heading, and the chart's own title under it.
    pub title: String,
    pub chart_title: String,
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    /// The legend's names: the roof, decode as its batch grows, one prompt's prefill, decode
    /// at the learner's batch (`{batch}`) and at the largest batch (`{batch}`).
    pub roof: String,
    pub decode: String,
    pub prefill: String,
    pub assumed: String,
    pub largest: String,
    /// The text alternative's rows of decode as its batch grows.
    pub row_decode: String,
    /// The text alternative's column heads.
    pub head_point: String,
    pub head_batch: String,
    pub head_intensity: String,
    pub head_attained: String,
    pub head_bound: String,
    pub memory_bound: String,
    pub compute_bound: String,
    /// Under the plot: the ridge (`{ridge}`) and where decode levels off (`{limit}`).
    pub note: String,
    /// After the note: decode never crosses the ridge, or crosses it at `{batch}`.
    pub note_never: String,
    pub note_crosses: String,
    /// Shown instead of the plot while an input is wrong.
    pub invalid: String,
    /// Shown on the calculator until the steps the plot would give away are revealed.
    pub waiting: String,
}

/// The banner on every page that reads the learner's calculator inputs
/// (`content/banner.toml`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BannerWords {
    /// Said when every input is the seed's.
    pub seed: String,
    /// Introduces the list of inputs that differ from the seed.
    pub yours: String,
    /// The button that puts the seed's inputs back.
    pub reset: String,
    /// An input of the batch question, `{label}` its label.
    pub batch: String,
}

/// What a run says about the engine it ran on (`content/engines.toml`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineWords {
    pub brief: String,
    pub validated: String,
    pub custom: String,
    pub to_validated: String,
    pub to_brief: String,
    pub checked: String,
}

/// The interview moments pages' own sentences (`content/moments-page.toml`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MomentsWords {
    pub eyebrow: String,
    pub lede: String,
    pub unknown_title: String,
    pub unknown: String,
    pub see_list: String,
    pub bad_choice: String,
    pub bad_engine: String,
    pub asks: String,
    pub your_approach: String,
    pub commit: String,
    pub try_again: String,
    pub pick_one: String,
    pub running: String,
    pub wall_time: String,
    pub target: String,
    pub caption: String,
    pub approach: String,
    pub others: String,
    pub sums_up: String,
    pub open_in_lab: String,
    /// A search moment's link to the advisor, which searches every combination.
    pub open_in_advisor: String,
    pub your_estimate: String,
    pub estimate_note: String,
    /// A bar for an option that misses the target: drawn, but never as the best.
    pub misses: String,
    /// `{factor}`, `{figure}`: how far behind the best an acceptable option may be.
    pub within: String,
    /// `{peak}`, `{quiet}`: a moment with a quiet hour runs every option at both rates.
    pub quiet: String,
    pub loads_title: String,
    pub loads_intro: String,
    pub loads_run: String,
    pub loads_rate: String,
    pub loads_best: String,
    pub loads_holding: String,
    /// `{option}`: the strong option, best at every load run.
    pub loads_hold: String,
    /// `{rate}`, `{best}`, `{option}`: a load where another option is best.
    pub loads_flip: String,
    /// `{rate}`: a load where no option holds the target.
    pub loads_none: String,
}

/// The frame around every page and the headings of the pages that have no content file of
/// their own (`content/site.toml`). The app draws them, and the build writes them into each
/// route's HTML file as its first paint (`site/`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteWords {
    pub skip: String,
    pub brand_name: String,
    pub brand_sub: String,
    /// The footer's sentences, before its link to the simulator page.
    pub footer: String,
    pub footer_link: String,
    /// What the first paint of an address the build does not know shows until the app loads.
    pub loading: String,
    /// The notice when a new version has been installed for offline use.
    pub update_ready: String,
    pub update_reload: String,
    pub lesson_eyebrow: String,
    /// The heading of the lesson's table of contents.
    pub lesson_contents: String,
    pub size_title: String,
    pub size_lede: String,
    pub buildups_title: String,
    /// A build-up's eyebrow; `{n}` is its place in the list.
    pub buildup_eyebrow: String,
    pub mock_title: String,
    pub report_title: String,
}

/// The start page's words (`content/home.toml`); `{name}`s are filled from the seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeWords {
    pub eyebrow: String,
    pub title: String,
    pub lede: String,
    pub start_sizing: String,
    pub read_lesson: String,
    pub glance_title: String,
    pub glance_note: String,
    pub fig_prefill: String,
    pub fig_decode: String,
    pub fig_throughput: String,
    pub fig_kv: String,
    pub start_title: String,
    pub status_started: String,
    pub status_not_started: String,
    /// The parts of the trainer, in the order a learner might take them; `id` is the part's
    /// section (`route::Section::id`).
    pub parts: Vec<HomePart>,
}

/// One part of the trainer on the start page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomePart {
    pub id: String,
    pub title: String,
    pub blurb: String,
}

/// Replaces each `{name}` in `template` by its value; a name without a value stays visible
/// as `{name}`, so a mistake shows instead of vanishing.
pub fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out = template.to_string();
    for (k, v) in values {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// The `{name}` placeholders of a template, in order.
pub fn placeholders(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        out.push(rest[i + 1..i + j].to_string());
        rest = &rest[i + j + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_every_named_placeholder_and_leaves_unknown_ones() {
        assert_eq!(
            fill(
                "{a} and {b} but {c}",
                &[("a", "1".into()), ("b", "2".into())]
            ),
            "1 and 2 but {c}"
        );
        assert_eq!(placeholders("x {a} y {b}"), vec!["a", "b"]);
    }
}
