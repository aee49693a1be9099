//! The `cuzk.v1.ProvingEngine` service: turns each RPC into engine calls and engine answers
//! into protobuf messages. No proving logic lives here.
use crate::error::ApiError;
use crate::proto::{
    await_proof_response, proving_engine_server::ProvingEngine, AwaitProofRequest,
    AwaitProofResponse, CancelProofRequest, CancelProofResponse, EvictSrsRequest, EvictSrsResponse,
    GetMetricsRequest, GetMetricsResponse, GetStatusRequest, GetStatusResponse, GetTimelineRequest,
    GetTimelineResponse, PreloadSrsRequest, PreloadSrsResponse, ProveRequest, ProveResponse,
    SubmitProofRequest, SubmitProofResponse,
};
use cuzk_core::{Engine, JobOutcome, JobState};
use std::sync::Arc;
use std::time::Duration;
use tonic::{Request, Response, Status};

/// The service object tonic calls; cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct ProvingService {
    /// The engine every RPC talks to.
    engine: Arc<Engine>,
    /// Whether PreloadSRS and EvictSRS are served (`server.admin_rpcs`).
    admin_rpcs: bool,
    /// The gRPC connections' counts, appended to GetMetrics' text.
    connections: Arc<crate::admission::ConnectionStats>,
}

impl ProvingService {
    /// A service over `engine`, admin RPCs on.
    pub fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            admin_rpcs: true,
            connections: Default::default(),
        }
    }

    /// Turns PreloadSRS and EvictSRS on or off; off, they answer PERMISSION_DENIED.
    pub fn admin_rpcs(mut self, on: bool) -> Self {
        self.admin_rpcs = on;
        self
    }

    /// Reports `stats` in GetMetrics beside the engine's metrics.
    pub(crate) fn connections(mut self, stats: Arc<crate::admission::ConnectionStats>) -> Self {
        self.connections = stats;
        self
    }

    fn admin_allowed(&self, rpc: &str) -> Result<(), Status> {
        if self.admin_rpcs {
            Ok(())
        } else {
            Err(Status::permission_denied(format!(
                "{rpc} is turned off in this daemon's config (server.admin_rpcs = false)"
            )))
        }
    }
}

/// Cancels a `Prove` job whose client went away before the proof was ready (the future is
/// dropped by tonic), so an abandoned request does not keep the GPU busy.
struct CancelOnDrop {
    engine: Arc<Engine>,
    job_id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(job) = self.job_id.take() {
            tracing::info!(job = %job, "Prove client went away; cancelling its job");
            if let Err(err) = self.engine.cancel(&job) {
                tracing::debug!(job = %job, cause = %err, "cancel after disconnect failed");
            }
        }
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Builds the `AwaitProofResponse` for an outcome.
fn await_response(outcome: JobOutcome) -> AwaitProofResponse {
    let t = &outcome.timings;
    let mut resp = AwaitProofResponse {
        job_id: outcome.job_id.to_string(),
        status: await_proof_response::Status::Unknown as i32,
        proof: Vec::new(),
        error_message: String::new(),
        queue_wait_ms: ms(t.queue_wait),
        srs_load_ms: ms(t.srs_load),
        synthesis_ms: ms(t.synthesis),
        gpu_compute_ms: ms(t.prover),
        total_ms: ms(t.total),
    };
    let status = match outcome.state {
        JobState::Completed { proof } => {
            resp.proof = proof;
            // E.g. TIMING-ONLY parameters: the proof does not verify.
            resp.error_message = outcome.note.unwrap_or_default();
            await_proof_response::Status::Completed
        }
        JobState::Failed { error } => {
            resp.error_message = error;
            await_proof_response::Status::Failed
        }
        JobState::Cancelled => {
            resp.error_message = "job was cancelled".into();
            await_proof_response::Status::Cancelled
        }
        JobState::TimedOut => {
            resp.error_message = "the wait timed out; the job is still running".into();
            await_proof_response::Status::Timeout
        }
    };
    resp.status = status as i32;
    resp
}

#[tonic::async_trait]
impl ProvingEngine for ProvingService {
    #[tracing::instrument(skip_all, fields(request_id))]
    async fn submit_proof(
        &self,
        request: Request<SubmitProofRequest>,
    ) -> Result<Response<SubmitProofResponse>, Status> {
        let arrival = crate::intake::ArrivalPermit::take(&request);
        let req = request.into_inner();
        tracing::Span::current().record("request_id", req.request_id.as_str());
        let req = crate::convert::proof_request(req)?;
        let sub = self
            .engine
            .submit_async_with(req, arrival)
            .await
            .map_err(ApiError::from)?;
        tracing::info!(job = %sub.job_id, duplicate = sub.duplicate, "submitted");
        Ok(Response::new(SubmitProofResponse {
            job_id: sub.job_id.to_string(),
            queue_position: sub.queue_position,
            assigned_gpu: String::new(),
            duplicate: sub.duplicate,
        }))
    }

    #[tracing::instrument(skip_all, fields(job = %request.get_ref().job_id))]
    async fn await_proof(
        &self,
        request: Request<AwaitProofRequest>,
    ) -> Result<Response<AwaitProofResponse>, Status> {
        let req = request.into_inner();
        let job_id = crate::convert::job_id(&req.job_id)?;
        let timeout = (req.timeout_ms > 0).then(|| Duration::from_millis(req.timeout_ms));
        let outcome = self
            .engine
            .wait(&job_id, timeout)
            .await
            .map_err(ApiError::from)?;
        Ok(Response::new(await_response(outcome)))
    }

    #[tracing::instrument(skip_all, fields(request_id))]
    async fn prove(
        &self,
        request: Request<ProveRequest>,
    ) -> Result<Response<ProveResponse>, Status> {
        let arrival = crate::intake::ArrivalPermit::take(&request);
        let submit = request
            .into_inner()
            .submit
            .ok_or_else(|| ApiError::InvalidArgument("ProveRequest.submit is missing".into()))?;
        tracing::Span::current().record("request_id", submit.request_id.as_str());
        let req = crate::convert::proof_request(submit)?;
        let sub = self
            .engine
            .submit_async_with(req, arrival)
            .await
            .map_err(ApiError::from)?;
        // Only the caller that created the job may cancel it on disconnect; a duplicate
        // request joins someone else's job.
        let mut guard = CancelOnDrop {
            engine: self.engine.clone(),
            job_id: (!sub.duplicate).then(|| sub.job_id.to_string()),
        };
        let outcome = self.engine.wait(&sub.job_id, None).await;
        guard.job_id = None;
        let outcome = outcome.map_err(ApiError::from)?;
        Ok(Response::new(ProveResponse {
            result: Some(await_response(outcome)),
        }))
    }

    #[tracing::instrument(skip_all, fields(job = %request.get_ref().job_id))]
    async fn cancel_proof(
        &self,
        request: Request<CancelProofRequest>,
    ) -> Result<Response<CancelProofResponse>, Status> {
        let job_id = crate::convert::job_id(&request.get_ref().job_id)?;
        let was_running = self.engine.cancel(&job_id).map_err(ApiError::from)?;
        tracing::info!(was_running, "cancelled");
        Ok(Response::new(CancelProofResponse { was_running }))
    }

    async fn get_status(
        &self,
        _request: Request<GetStatusRequest>,
    ) -> Result<Response<GetStatusResponse>, Status> {
        Ok(Response::new(crate::convert::status(&self.engine)))
    }

    async fn get_metrics(
        &self,
        _request: Request<GetMetricsRequest>,
    ) -> Result<Response<GetMetricsResponse>, Status> {
        Ok(Response::new(GetMetricsResponse {
            prometheus_text: self.engine.prometheus() + &self.connections.prometheus(),
        }))
    }

    #[tracing::instrument(skip_all, fields(circuit = %request.get_ref().circuit_id))]
    async fn preload_srs(
        &self,
        request: Request<PreloadSrsRequest>,
    ) -> Result<Response<PreloadSrsResponse>, Status> {
        self.admin_allowed("PreloadSRS")?;
        let id = crate::convert::circuit_id(&request.get_ref().circuit_id)?;
        let out = self.engine.preload_srs(&id).await.map_err(ApiError::from)?;
        Ok(Response::new(PreloadSrsResponse {
            already_loaded: out.already_loaded,
            load_time_ms: ms(out.load_time),
        }))
    }

    #[tracing::instrument(skip_all, fields(circuit = %request.get_ref().circuit_id))]
    async fn evict_srs(
        &self,
        request: Request<EvictSrsRequest>,
    ) -> Result<Response<EvictSrsResponse>, Status> {
        self.admin_allowed("EvictSRS")?;
        let id = crate::convert::circuit_id(&request.get_ref().circuit_id)?;
        // Freeing tens of GiB of points takes seconds: not on a runtime worker.
        let engine = self.engine.clone();
        let out = tokio::task::spawn_blocking(move || engine.evict_srs(&id))
            .await
            .map_err(|e| Status::internal(format!("EvictSRS task: {e}")))?
            .map_err(ApiError::from)?;
        Ok(Response::new(EvictSrsResponse {
            was_loaded: out.was_loaded,
            freed_bytes: out.freed_bytes,
        }))
    }

    async fn get_timeline(
        &self,
        _request: Request<GetTimelineRequest>,
    ) -> Result<Response<GetTimelineResponse>, Status> {
        Ok(Response::new(crate::convert::timeline(&self.engine)))
    }
}
