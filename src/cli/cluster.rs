//! `golint-k8s cluster`: list a live cluster read-only and report with the same rules and
//! formats as `lint`. There is no `fix` here: the cluster is never written to; findings name the
//! object and field to change in its manifest.

use std::path::PathBuf;

use clap::Args;

use super::lint::{ImageArgs, LintArgs, ReportArgs};

#[derive(Args, Debug, Clone)]
pub struct ClusterArgs {
    /// The kubeconfig to use [default: $KUBECONFIG, ~/.kube/config, or in-cluster].
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context [default: its current context].
    #[arg(long)]
    pub context: Option<String>,
    /// Only this namespace [default: every namespace].
    #[arg(long, short = 'n', conflicts_with = "all_namespaces")]
    pub namespace: Option<String>,
    /// Every namespace (the default; for symmetry with kubectl).
    #[arg(long, short = 'A')]
    pub all_namespaces: bool,
    /// Only workloads with these labels (a label selector such as app=api,tier!=cache).
    #[arg(long, short = 'l')]
    pub selector: Option<String>,
    /// Seconds each request to the API server may take.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub timeout: u64,
    #[command(flatten)]
    pub report: ReportArgs,
    /// CPUs of the nodes [default: the largest node's CPU capacity, listed from the cluster].
    #[arg(long)]
    pub node_cpus: Option<u32>,
    /// List every container with the runtime it is judged to run and the evidence (the image's,
    /// with --inspect-images), instead of the findings.
    #[arg(long)]
    pub show_containers: bool,
    /// With --inspect-images, each image is read at the digest its pods run, as the kubelet
    /// reports it (`status.containerStatuses[].imageID`); an image no listed pod runs, by its tag.
    #[command(flatten)]
    pub images: ImageArgs,
}

impl ClusterArgs {
    /// The `lint` arguments that govern selection, config and output.
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    fn lint_args(&self) -> LintArgs {
        LintArgs {
            paths: Vec::new(),
            report: self.report.clone(),
            node_cpus: self.node_cpus,
            stdin_filename: None,
            helm: None,
            values: Vec::new(),
            set: Vec::new(),
            release: None,
            chart: None,
            parse_only: false,
            index_only: false,
            show_containers: self.show_containers,
            show_settings: false,
            exclude: Vec::new(),
            extend_exclude: Vec::new(),
            new_from_rev: None,
            images: self.images.clone(),
        }
    }
}

#[cfg(not(feature = "cluster"))]
pub fn run(_: ClusterArgs) -> i32 {
    say!("error: this golint-k8s was built without cluster support; build it with `--features cluster`");
    2
}

#[cfg(feature = "cluster")]
pub fn run(a: ClusterArgs) -> i32 {
    use crate::cluster::{audit, fetch, Inventory};
    use std::io::IsTerminal;

    let mut la = a.lint_args();
    let mut p = match super::lint::prepare(&mut la) {
        Ok(p) => p,
        Err(e) => return super::fail(e),
    };
    let cfg = match p.finder.for_file(std::path::Path::new("cluster")) {
        Ok(c) => c,
        Err(e) => return super::fail(e.into()),
    };
    let target = fetch::Target {
        kubeconfig: a.kubeconfig.clone(),
        context: a.context.clone(),
        namespace: a.namespace.clone(),
        selector: a.selector.clone(),
        timeout: std::time::Duration::from_secs(a.timeout.max(1)),
    };
    let terminal = std::io::stderr().is_terminal();
    let progress = |n: usize| {
        if terminal {
            say_raw!("\rgolint-k8s: listed {n} objects…");
        }
    };
    let listing = fetch::list(&target, &progress);
    if terminal {
        say_raw!("\r\x1b[K");
    }
    let listing = match listing {
        Ok(l) => l,
        Err(e) => return super::fail(crate::error::Error::Cluster(e)),
    };
    if let Some(e) = &listing.nodes_error {
        say!("note: node sizes unknown, so the throttling numbers use node-cpus from the config: {e}");
    }
    if let Some(n) = &listing.vpas_note {
        say!("note: {n}");
    }
    let mut inv = Inventory::from_listed(listing.objects, &listing.nodes);
    // The cluster's node size replaces node-cpus from the config, but not an explicit flag.
    if a.node_cpus.is_some() {
        inv.nodes = None;
    }
    if la.images.inspect_images || cfg.inspect_images {
        let mut images = la.images.clone();
        if images.platform.is_none() {
            images.platform = nodes_platform(&listing.nodes);
        }
        inspect_running_images(&inv, &cfg, &images, &mut p.project.images);
    }
    if a.show_containers {
        return super::lint::write_containers(
            &la,
            crate::cluster::containers(&inv, &cfg, &p.project),
            false,
        );
    }
    let reports = audit(&inv, &cfg, &p.sel, &p.project);
    super::lint::report(&la, reports, None, false, &[])
}

/// The platform to read multi-platform images for: the nodes' (most of them, said when they
/// differ), else the default.
#[cfg(feature = "cluster")]
fn nodes_platform(nodes: &[crate::cluster::Listed]) -> Option<String> {
    let (platform, others) = crate::cluster::node_platform(nodes)?;
    if others > 0 {
        say!(
            "note: the nodes run more than one platform; multi-platform images are read for \
             {platform}, which most of them run ({others} {} another; --platform picks one)",
            if others == 1 {
                "node runs"
            } else {
                "nodes run"
            }
        );
    }
    Some(platform)
}

/// `--inspect-images` in a cluster: what runs, not what the tag names now. Each image is read at
/// the digest its pods run; pods that disagree (a tag pushed again during a rollout) are said.
#[cfg(all(feature = "cluster", feature = "images"))]
fn inspect_running_images(
    inv: &crate::cluster::Inventory,
    cfg: &crate::config::Config,
    a: &ImageArgs,
    found: &mut crate::image::Inspected,
) {
    let images = crate::cluster::images_in_use(inv, cfg);
    let mut pinned = 0;
    let targets: Vec<(String, String)> = images
        .iter()
        .map(|i| {
            let read = i.running.as_ref().and_then(|r| {
                if r.digests > 1 {
                    say!(
                        "note: the pods of image {} run {} digests; read is {}, which {} of {} run",
                        i.image,
                        r.digests,
                        r.digest,
                        r.pods,
                        r.of
                    );
                }
                crate::image::registry::pin(&i.image, &r.digest)
            });
            pinned += usize::from(read.is_some());
            (i.image.clone(), read.unwrap_or_else(|| i.image.clone()))
        })
        .collect();
    if !images.is_empty() {
        say!(
            "note: images read at the digest their pods run (the kubelet's imageID): {pinned} of \
             {}; the others, which no listed pod runs, by their reference",
            images.len()
        );
    }
    super::lint::inspect_and_remember(targets, a, cfg.image_registries.clone(), found);
}

#[cfg(all(feature = "cluster", not(feature = "images")))]
fn inspect_running_images(
    _: &crate::cluster::Inventory,
    _: &crate::config::Config,
    _: &ImageArgs,
    _: &mut crate::image::Inspected,
) {
    say!("note: --inspect-images needs the feature `images`, which this build was made without");
}
