//! Listing a cluster, read-only: every kind the audit needs, paged, each request under a timeout,
//! with errors that say exactly what went wrong (the server cannot be reached, the credentials are
//! rejected, or which verb on which resource RBAC refuses).

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{LimitRange, Node, Pod};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde::{de::DeserializeOwned, Serialize};

use super::Listed;

/// Objects per page: the API server's own default for kubectl is 500.
const PAGE: u32 = 500;

/// Where and what to list.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// None: every namespace.
    pub namespace: Option<String>,
    pub selector: Option<String>,
    pub timeout: Duration,
}

/// What a listing found.
pub struct Listing {
    pub objects: Vec<Listed>,
    pub nodes: Vec<Listed>,
    /// Why nodes could not be listed (the audit then falls back to `node-cpus`).
    pub nodes_error: Option<String>,
    /// Why VerticalPodAutoscalers could not be listed: their CRD is not installed, or RBAC
    /// refuses them (the audit then runs without them).
    pub vpas_note: Option<String>,
    /// The server's URL, for messages.
    pub server: String,
}

/// Connect and list everything, or say why not.
pub fn list(target: &Target, progress: &(dyn Fn(usize) + Sync)) -> Result<Listing, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the client runtime: {e}"))?;
    rt.block_on(list_async(target, progress))
}

async fn config(target: &Target) -> Result<Config, String> {
    let options = KubeConfigOptions {
        context: target.context.clone(),
        ..KubeConfigOptions::default()
    };
    let mut cfg = match &target.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read the kubeconfig {}: {e}", path.display()))?;
            Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| format!("invalid kubeconfig {}: {e}", path.display()))?
        }
        None if target.context.is_some() => Config::from_kubeconfig(&options)
            .await
            .map_err(|e| format!("cannot load the kubeconfig context: {e}"))?,
        // KUBECONFIG or ~/.kube/config, else the in-cluster service account.
        None => Config::infer().await.map_err(|e| {
            format!("no cluster configured (no kubeconfig and not running in a pod): {e}")
        })?,
    };
    cfg.connect_timeout = Some(target.timeout);
    cfg.read_timeout = Some(target.timeout);
    cfg.write_timeout = Some(target.timeout);
    Ok(cfg)
}

async fn list_async(target: &Target, progress: &(dyn Fn(usize) + Sync)) -> Result<Listing, String> {
    let cfg = config(target).await?;
    let server = cfg.cluster_url.to_string();
    let client = Client::try_from(cfg).map_err(|e| format!("cannot create the client: {e}"))?;
    let seen = std::sync::atomic::AtomicUsize::new(0);
    let count = |n: usize| {
        let total = seen.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
        progress(total);
    };
    let t = target;
    let count: &(dyn Fn(usize) + Sync) = &count;
    let ctx: Ctx<'_> = (&client, t, &server, count);
    // One request per kind at a time, the kinds side by side: at most nine requests in flight.
    let (
        deployments,
        statefulsets,
        daemonsets,
        replicasets,
        jobs,
        cronjobs,
        pods,
        limitranges,
        vpas,
        nodes,
    ) = tokio::join!(
        namespaced::<Deployment>(ctx, "deployments.apps", true),
        namespaced::<StatefulSet>(ctx, "statefulsets.apps", true),
        namespaced::<DaemonSet>(ctx, "daemonsets.apps", true),
        namespaced::<ReplicaSet>(ctx, "replicasets.apps", true),
        namespaced::<Job>(ctx, "jobs.batch", true),
        namespaced::<CronJob>(ctx, "cronjobs.batch", true),
        namespaced::<Pod>(ctx, "pods", true),
        // LimitRanges apply whatever the workloads' labels.
        namespaced::<LimitRange>(ctx, "limitranges", false),
        vertical_pod_autoscalers(ctx),
        pages(
            Api::<Node>::all(client.clone()),
            ListParams::default(),
            "nodes",
            None,
            &server,
            count,
            t.timeout
        ),
    );
    let mut objects = Vec::new();
    for part in [
        deployments,
        statefulsets,
        daemonsets,
        replicasets,
        jobs,
        cronjobs,
        pods,
        limitranges,
    ] {
        objects.extend(part?);
    }
    let vpas_note = match vpas {
        Ok(v) => {
            objects.extend(v);
            None
        }
        Err(e) => Some(e),
    };
    let (nodes, nodes_error) = match nodes {
        Ok(n) => (n, None),
        // Node sizes only sharpen the numbers; without them the audit still runs.
        Err(e) => (Vec::new(), Some(e)),
    };
    Ok(Listing {
        objects,
        nodes,
        nodes_error,
        vpas_note,
        server,
    })
}

/// The VerticalPodAutoscalers (`autoscaling.k8s.io/v1`), a custom resource: a cluster without
/// the VPA has no such resource, which is a note, not a failure.
async fn vertical_pod_autoscalers(ctx: Ctx<'_>) -> Result<Vec<Listed>, String> {
    let (client, t, server, count) = ctx;
    let gvk = GroupVersionKind::gvk("autoscaling.k8s.io", "v1", "VerticalPodAutoscaler");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "verticalpodautoscalers");
    let api: Api<DynamicObject> = match &t.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    let resource = "verticalpodautoscalers.autoscaling.k8s.io";
    let not_checked = "in-place resizes by a VerticalPodAutoscaler were not checked (GK110, GK207)";
    // One small request first: a 404 means the resource does not exist in this cluster.
    let probe = tokio::time::timeout(
        t.timeout + Duration::from_secs(1),
        api.list(&ListParams::default().limit(1)),
    )
    .await;
    match probe {
        Ok(Err(kube::Error::Api(e))) if e.code == 404 => {
            return Err(format!(
                "the cluster has no VerticalPodAutoscaler resource (the VPA's CRD is not installed): {not_checked}"
            ))
        }
        Ok(Err(e)) => {
            return Err(format!(
                "{}: {not_checked}",
                describe(&e, resource, t.namespace.as_deref(), server)
            ))
        }
        Err(_) => {
            return Err(format!(
                "listing {resource} took longer than {} s (--timeout): {not_checked}",
                t.timeout.as_secs()
            ))
        }
        Ok(Ok(_)) => {}
    }
    let mut vpas = pages(
        api,
        ListParams::default(),
        resource,
        t.namespace.as_deref(),
        server,
        count,
        t.timeout,
    )
    .await
    .map_err(|e| format!("{e}: {not_checked}"))?;
    // Items of a custom resource's list may leave out their type.
    for v in &mut vpas {
        v.json["apiVersion"] = "autoscaling.k8s.io/v1".into();
        v.json["kind"] = "VerticalPodAutoscaler".into();
        v.kind = "VerticalPodAutoscaler".to_string();
    }
    Ok(vpas)
}

type Ctx<'a> = (
    &'a Client,
    &'a Target,
    &'a String,
    &'a (dyn Fn(usize) + Sync),
);

async fn namespaced<K>(
    ctx: Ctx<'_>,
    resource: &str,
    with_selector: bool,
) -> Result<Vec<Listed>, String>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + std::fmt::Debug,
{
    let (client, t, server, count) = ctx;
    let api = match &t.namespace {
        Some(ns) => Api::<K>::namespaced(client.clone(), ns),
        None => Api::<K>::all(client.clone()),
    };
    let mut lp = ListParams::default();
    if let (true, Some(sel)) = (with_selector, &t.selector) {
        lp = lp.labels(sel);
    }
    pages(
        api,
        lp,
        resource,
        t.namespace.as_deref(),
        server,
        count,
        t.timeout,
    )
    .await
}

/// All pages of one list (`limit`/`continue`), each request under the timeout.
async fn pages<K>(
    api: Api<K>,
    lp: ListParams,
    resource: &str,
    namespace: Option<&str>,
    server: &str,
    count: &(dyn Fn(usize) + Sync),
    timeout: Duration,
) -> Result<Vec<Listed>, String>
where
    K: kube::Resource + Clone + DeserializeOwned + Serialize + std::fmt::Debug,
{
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut page_params = lp.clone().limit(PAGE);
        if let Some(t) = &token {
            page_params = page_params.continue_token(t);
        }
        let page =
            match tokio::time::timeout(timeout + Duration::from_secs(1), api.list(&page_params))
                .await
            {
                Err(_) => {
                    return Err(format!(
                        "listing {resource} on {server} took longer than {} s (--timeout)",
                        timeout.as_secs()
                    ))
                }
                Ok(Err(e)) => return Err(describe(&e, resource, namespace, server)),
                Ok(Ok(p)) => p,
            };
        count(page.items.len());
        for item in page.items {
            // k8s-openapi's typed objects always serialise their apiVersion and kind.
            let json = serde_json::to_value(&item)
                .map_err(|e| format!("cannot read a listed {resource}: {e}"))?;
            out.push(Listed::new(json));
        }
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => token = Some(c),
            _ => return Ok(out),
        }
    }
}

/// The error a user can act on.
fn describe(e: &kube::Error, resource: &str, namespace: Option<&str>, server: &str) -> String {
    let scope = match namespace {
        Some(ns) => format!("in the namespace {ns}"),
        None => "in every namespace".to_string(),
    };
    match e {
        kube::Error::Api(s) if s.code == 403 => format!(
            "the API server refused to list {resource} {scope} (403 Forbidden): the credentials lack the verb \"list\" on the resource \"{resource}\". Grant the read-only ClusterRole in deploy/rbac.yaml. The server said: {}",
            s.message
        ),
        kube::Error::Api(s) if s.code == 401 => format!(
            "the API server at {server} rejected the credentials (401 Unauthorized): the token or certificate is expired or invalid; refresh the kubeconfig's credentials"
        ),
        kube::Error::Api(s) => format!(
            "the API server refused to list {resource} {scope} ({} {}): {}",
            s.code, s.reason, s.message
        ),
        kube::Error::Auth(a) => format!("cannot authenticate to {server}: {a}"),
        other => {
            let mut msg = other.to_string();
            let mut source = std::error::Error::source(other);
            while let Some(s) = source {
                msg.push_str(": ");
                msg.push_str(&s.to_string());
                source = s.source();
            }
            format!("cannot reach the API server at {server} while listing {resource}: {msg}")
        }
    }
}
