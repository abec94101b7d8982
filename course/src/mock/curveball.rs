//! A curveball's grading by a run: a replica count at the changed load, or a moment's chosen
//! option among every option's run.

use super::*;

/// The fleet question's inputs for a `replicas` curveball: `base` with the rate scaled.
pub fn curveball_inputs(c: &Curveball, base: &Inputs) -> Result<Inputs, ConfigError> {
    let mut inputs = base.clone();
    let rate = base.get("rate").unwrap_or(0.0) * c.rate_factor.unwrap_or(1.0);
    inputs.set(Question::Fleet, "rate", rate)?;
    Ok(inputs)
}

/// The replicas the derivation gives for a `replicas` curveball, spares included.
pub fn reference_replicas(c: &Curveball, base: &Inputs) -> Result<u32, ConfigError> {
    let inputs = curveball_inputs(c, base)?;
    let d = derive(Question::Fleet, &inputs).map_err(|mut e| e.remove(0))?;
    let n = d
        .answer()
        .map(|s| s.value)
        .ok_or_else(|| ConfigError::new("replicas", "the derivation gave no answer"))?;
    Ok(n.ceil() as u32 + c.spare.unwrap_or(0))
}

/// The fleet that runs an answer of `answer` replicas to a `replicas` curveball: the scaled
/// load on the replicas left once the spares are gone (None when none is left).
pub fn replicas_fleet(
    c: &Curveball,
    base: &Inputs,
    answer: u32,
) -> Result<Option<FleetConfig>, ConfigError> {
    let serving = answer.saturating_sub(c.spare.unwrap_or(0));
    if serving == 0 {
        return Ok(None);
    }
    fleet_config(&curveball_inputs(c, base)?, serving, &CHECK).map(Some)
}

/// Grades an answer of `answer` replicas by the run of [`replicas_fleet`] (`check`: None when
/// no replica was left to run).
pub fn grade_replicas(
    m: &Mock,
    c: &Curveball,
    base: &Inputs,
    answer: u32,
    check: Option<&SimCheck>,
) -> Result<Pushback, ConfigError> {
    let spare = c.spare.unwrap_or(0);
    let Some(check) = check else {
        return Ok(Pushback {
            grade: Grade::Weak,
            holds: false,
            summary: m.say(
                "no_replica",
                &[("answer", int(answer as f64)), ("spare", int(spare as f64))],
            ),
        });
    };
    let inputs = curveball_inputs(c, base)?;
    let price = inputs.get("price").unwrap_or(0.0);
    let reference = reference_replicas(c, base)?;
    let holds = check.passes();
    let grade = if !holds {
        Grade::Weak
    } else if answer <= reference {
        Grade::Strong
    } else {
        Grade::Acceptable
    };
    let lost = check.timed_out + check.rejected;
    let key = match grade {
        // A zero reads as "no request was lost", not "0 requests lost".
        Grade::Weak if lost == 0 => "replicas_weak_none_lost",
        Grade::Weak => "replicas_weak",
        Grade::Strong => "replicas_strong",
        Grade::Acceptable => "replicas_acceptable",
    };
    let fill = [
        ("answer", int(answer as f64)),
        ("serving", int(check.replicas as f64)),
        (
            "rate",
            format!("{} req/s", sig(inputs.get("rate").unwrap_or(0.0), 3)),
        ),
        ("ttft", duration(check.ttft_p99_s, 3)),
        ("tpot", duration(check.tpot_p99_s, 3)),
        ("ttft_target", duration(check.ttft_target_s, 3)),
        ("tpot_target", duration(check.tpot_target_s, 3)),
        ("lost", int(lost as f64)),
        ("reference", int(reference as f64)),
        ("cost", money(answer as f64 * price)),
        ("reference_cost", money(reference as f64 * price)),
    ];
    Ok(Pushback {
        grade,
        holds,
        summary: m.say(key, &fill),
    })
}

/// What finance allows a `cost_cut` curveball: the fleet the arithmetic sizes for the mock's
/// load, its bill an hour, and that bill less the cut.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    pub cut: f64,
    pub reference_replicas: u32,
    pub reference_dollars_per_hour: f64,
    pub allowed_dollars_per_hour: f64,
}

/// The budget of curveball `c` at the mock's load `base` (None: the curveball cuts nothing).
pub fn budget(c: &Curveball, base: &Inputs) -> Result<Option<Budget>, ConfigError> {
    let Some(cut) = c.cost_cut else {
        return Ok(None);
    };
    let inputs = curveball_inputs(c, base)?;
    let d = derive(Question::Fleet, &inputs).map_err(|mut e| e.remove(0))?;
    let reference = d
        .step("cost_per_hour")
        .map(|s| s.value)
        .ok_or_else(|| ConfigError::new("cost_cut", "the derivation gave no cost"))?;
    let n = reference_replicas(c, base)?;
    Ok(Some(Budget {
        cut,
        reference_replicas: n,
        reference_dollars_per_hour: reference,
        allowed_dollars_per_hour: reference * (1.0 - cut),
    }))
}

/// Grades option `chosen` of a `moment` curveball from every option's outcome (`shown`
/// formats a figure of the moment by its index). With a `budget` (the moment's key figure is
/// then a bill an hour), an option over it is weak whatever its rank, and the sentence says
/// where it stands against the budget.
pub fn grade_option(
    m: &Mock,
    moment: &Moment,
    outcomes: &[OptionOutcome],
    chosen: usize,
    budget: Option<&Budget>,
    shown: impl Fn(usize, Option<f64>) -> String,
) -> Pushback {
    let ranking = moment.ranking(outcomes);
    let outcome = &outcomes[chosen];
    let holds = moment.holds_slo(outcome);
    let key_i = moment.figure_index(&moment.key).unwrap_or(0);
    let key_value = outcome.figures.get(key_i).copied().flatten();
    let over = budget.map(|b| key_value.is_none_or(|v| v > b.allowed_dollars_per_hour + 1e-9));
    // The moment's own grades, computed from the runs: the mock never grades otherwise.
    let ranked = moment
        .grades(outcomes)
        .get(chosen)
        .copied()
        .unwrap_or(Grade::Weak);
    let grade = if over == Some(true) {
        Grade::Weak
    } else {
        ranked
    };
    let label = |i: usize| {
        moment
            .figures
            .get(i)
            .map_or(String::new(), |f| f.label.clone())
    };
    let best = ranking
        .first()
        .map(|b| shown(key_i, outcomes[*b].figures.get(key_i).copied().flatten()))
        .unwrap_or_default();
    let (slo_label, slo, slo_max) = match &moment.slo {
        Some(s) => {
            let i = moment.figure_index(&s.figure).unwrap_or(0);
            (
                label(i),
                shown(i, outcome.figures.get(i).copied().flatten()),
                shown(i, Some(s.max)),
            )
        }
        None => Default::default(),
    };
    let key = match grade {
        Grade::Weak if key_value.is_none() => "moment_no_key",
        Grade::Weak if over == Some(true) => "moment_over_budget",
        // It holds the target yet trails the best by more than the moment allows.
        Grade::Weak if holds => "moment_weak_behind",
        // When the target is on the key figure itself, the sentence names it once.
        Grade::Weak if moment.slo.as_ref().is_some_and(|s| s.figure == moment.key) => {
            "moment_weak_on_key"
        }
        Grade::Weak => "moment_weak",
        Grade::Strong => "moment_strong",
        Grade::Acceptable => "moment_acceptable",
    };
    let fill = [
        (
            "option",
            moment
                .options
                .get(chosen)
                .map_or(String::new(), |o| o.label.trim_end_matches('.').to_string()),
        ),
        ("key_label", label(key_i)),
        (
            "key",
            shown(key_i, outcome.figures.get(key_i).copied().flatten()),
        ),
        ("best", best),
        ("slo_label", slo_label),
        ("slo", slo),
        ("slo_max", slo_max),
    ];
    let mut summary = m.say(key, &fill);
    if let Some(b) = budget {
        let pct = format!("{} %", trainer_engine::format::num(b.cut * 100.0));
        let said = m.say(
            if over == Some(true) {
                "budget_missed"
            } else {
                "budget_met"
            },
            &[
                ("cut", pct),
                ("allowed", money(b.allowed_dollars_per_hour)),
                ("reference", int(b.reference_replicas as f64)),
                ("reference_cost", money(b.reference_dollars_per_hour)),
            ],
        );
        summary = format!("{summary} {said}");
    }
    Pushback {
        grade,
        holds,
        summary,
    }
}

/// The grade's id, as progress stores it.
pub fn grade_id(g: Grade) -> &'static str {
    match g {
        Grade::Weak => "weak",
        Grade::Acceptable => "acceptable",
        Grade::Strong => "strong",
    }
}
