//! `pauselab doctor`'s report: its JSON form, and its text with findings alike on several
//! JVMs folded into one entry that names them.

use pauselab_host::doctor::{Finding, JvmFacts, Severity};
use pauselab_pause::input::escape_control;
use serde::Serialize;

/// What `pauselab doctor` found: its text (`render_doctor`) and its `--json` document.
#[derive(Serialize)]
pub struct DoctorReport {
    /// The JVMs checked, with what their processes and counters say.
    pub jvms: Vec<JvmFacts>,
    /// Every finding about the host and the JVMs.
    pub findings: Vec<Finding>,
    /// Highest severity among the findings.
    pub worst: Severity,
    summary: Summary,
}

impl DoctorReport {
    /// The report of these JVMs and findings, with its worst severity and summary.
    pub fn new(jvms: Vec<JvmFacts>, findings: Vec<Finding>) -> DoctorReport {
        let worst = findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::Ok);
        DoctorReport {
            jvms,
            summary: Summary::of(&findings),
            findings,
            worst,
        }
    }
}

/// How many findings of each severity, and which checks found something critical where:
/// the closing line of the text.
#[derive(Serialize)]
struct Summary {
    critical: usize,
    warning: usize,
    info: usize,
    ok: usize,
    /// Each critical check with the subjects (`host`, `pid N (main)`) it was found on.
    critical_checks: Vec<CriticalCheck>,
}

#[derive(Serialize)]
struct CriticalCheck {
    check: &'static str,
    subjects: Vec<String>,
}

impl Summary {
    fn of(findings: &[Finding]) -> Summary {
        let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
        let mut critical_checks: Vec<CriticalCheck> = Vec::new();
        for f in findings.iter().filter(|f| f.severity == Severity::Critical) {
            match critical_checks.iter_mut().find(|c| c.check == f.check) {
                Some(c) if c.subjects.contains(&f.subject) => {}
                Some(c) => c.subjects.push(f.subject.clone()),
                None => critical_checks.push(CriticalCheck {
                    check: f.check,
                    subjects: vec![f.subject.clone()],
                }),
            }
        }
        Summary {
            critical: count(Severity::Critical),
            warning: count(Severity::Warning),
            info: count(Severity::Info),
            ok: count(Severity::Ok),
            critical_checks,
        }
    }

    /// `2 critical, 1 warning, 4 info, 9 ok; critical: hsperf-stable-pages (pid 7 (App), pid
    /// 9 (Svc)), swap-...`
    fn line(&self) -> String {
        let mut line = format!(
            "{} critical, {} warning, {} info, {} ok",
            self.critical, self.warning, self.info, self.ok
        );
        if !self.critical_checks.is_empty() {
            let named: Vec<String> = self
                .critical_checks
                .iter()
                .map(|c| format!("{} ({})", c.check, escape_control(&c.subjects.join(", "))))
                .collect();
            line.push_str(&format!("; critical: {}", named.join(", ")));
        }
        line
    }
}

/// Findings of one check with the same severity, reasoning and fix on several JVMs: printed
/// once, naming the JVMs, instead of once per JVM.
struct Folded<'a> {
    findings: Vec<&'a Finding>,
}

impl Folded<'_> {
    /// The JVMs, once each (one JVM may have several alike, e.g. one per log file).
    fn jvms(&self) -> Vec<&str> {
        let mut jvms: Vec<&str> = Vec::new();
        for f in &self.findings {
            if !jvms.contains(&f.subject.as_str()) {
                jvms.push(&f.subject);
            }
        }
        jvms
    }
}

/// Splits the findings into those alike on several JVMs and the rest, both in their order.
fn fold<'a>(
    findings: &'a [Finding],
    jvm_subjects: &[String],
) -> (Vec<Folded<'a>>, Vec<&'a Finding>) {
    let alike = |a: &Finding, b: &Finding| {
        a.check == b.check && a.severity == b.severity && a.why == b.why && a.fix == b.fix
    };
    let mut groups: Vec<Folded> = Vec::new();
    let mut single: Vec<&Finding> = Vec::new();
    for f in findings {
        if !jvm_subjects.contains(&f.subject) {
            single.push(f);
            continue;
        }
        match groups.iter_mut().find(|g| alike(g.findings[0], f)) {
            Some(group) => group.findings.push(f),
            None => groups.push(Folded { findings: vec![f] }),
        }
    }
    let (folded, alone): (Vec<Folded>, Vec<Folded>) =
        groups.into_iter().partition(|g| g.jvms().len() > 1);
    single.extend(alone.into_iter().flat_map(|g| g.findings));
    single.sort_by_key(|f| findings.iter().position(|g| std::ptr::eq(*f, g)));
    (folded, single)
}

fn severity_label(severity: Severity) -> String {
    format!("{:<9}", severity.as_str().to_uppercase())
}

fn push_evidence(out: &mut String, f: &Finding, prefix: &str) {
    for e in &f.evidence {
        out.push_str(&format!(
            "          evidence: {prefix}{}  ({})\n",
            escape_control(&e.value),
            escape_control(&e.source)
        ));
    }
}

fn push_why_fix(out: &mut String, f: &Finding) {
    out.push_str(&format!(
        "          why: {}\n          fix: {}\n",
        escape_control(&f.why),
        escape_control(&f.fix)
    ));
}

fn render_folded(out: &mut String, group: &Folded) {
    let first = group.findings[0];
    let subjects: Vec<String> = group
        .findings
        .iter()
        .map(|f| escape_control(&f.subject).into_owned())
        .collect();
    let jvms: Vec<String> = group
        .jvms()
        .into_iter()
        .map(|jvm| escape_control(jvm).into_owned())
        .collect();
    let same_title = group.findings.iter().all(|f| f.title == first.title);
    if same_title {
        out.push_str(&format!(
            "{} {}  [{}]\n          on {} JVMs: {}\n",
            severity_label(first.severity),
            escape_control(&first.title),
            first.check,
            jvms.len(),
            jvms.join(", ")
        ));
    } else {
        out.push_str(&format!(
            "{} on {} JVMs  [{}]\n",
            severity_label(first.severity),
            jvms.len(),
            first.check
        ));
        for (f, subject) in group.findings.iter().zip(&subjects) {
            out.push_str(&format!(
                "          {subject}: {}\n",
                escape_control(&f.title)
            ));
        }
    }
    if first.severity >= Severity::Warning {
        let same_evidence = group.findings.iter().all(|f| {
            f.evidence.len() == first.evidence.len()
                && f.evidence
                    .iter()
                    .zip(&first.evidence)
                    .all(|(a, b)| a.value == b.value && a.source == b.source)
        });
        if same_evidence {
            push_evidence(out, first, "");
        } else {
            for (f, subject) in group.findings.iter().zip(&subjects) {
                push_evidence(out, f, &format!("{subject}: "));
            }
        }
        push_why_fix(out, first);
    }
}

/// The text report. Subjects, titles and evidence quote other processes' command lines,
/// paths and counters: each field is escaped on its own, so a line break in a `-jar` path
/// prints as `\n` inside its line instead of starting a line of its own.
pub fn render_doctor(report: &DoctorReport) -> String {
    let mut out = String::new();
    let jvm_subjects: Vec<String> = report.jvms.iter().map(JvmFacts::subject).collect();
    let (mut folded, single) = fold(&report.findings, &jvm_subjects);
    folded.sort_by_key(|g| std::cmp::Reverse(g.findings[0].severity));
    let mut subjects: Vec<&str> = Vec::new();
    for f in &single {
        if !subjects.contains(&f.subject.as_str()) {
            subjects.push(&f.subject);
        }
    }
    if report.jvms.is_empty() {
        out.push_str("no running JVMs found: host checks only\n\n");
    }
    let mut folded_shown = folded.is_empty();
    for subject in subjects {
        // The folded findings come after the host's, before each JVM's own.
        if !folded_shown && subject != "host" {
            render_folded_section(&mut out, &folded);
            folded_shown = true;
        }
        out.push_str(&format!("== {}\n", escape_control(subject)));
        let mut findings: Vec<&Finding> = single
            .iter()
            .copied()
            .filter(|f| f.subject == subject)
            .collect();
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        for f in findings {
            out.push_str(&format!(
                "{} {}  [{}]\n",
                severity_label(f.severity),
                escape_control(&f.title),
                f.check
            ));
            if f.severity >= Severity::Warning {
                push_evidence(&mut out, f, "");
                push_why_fix(&mut out, f);
            }
        }
        out.push('\n');
    }
    if !folded_shown {
        render_folded_section(&mut out, &folded);
    }
    out.push_str(&report.summary.line());
    out.push('\n');
    out
}

fn render_folded_section(out: &mut String, folded: &[Folded]) {
    out.push_str("== alike on several JVMs\n");
    for group in folded {
        render_folded(out, group);
    }
    out.push('\n');
}
