//! [`Client`]'s operations: one method per MCP request, over the driver.

//! [`Client`]: the async MCP client, one type over every [`Transport`].

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Map, Value};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::ClientError;
use super::builder::ClientBuilder;
use std::future::Future;

use super::driver::{Client, Reply, invalidate_tool_cache, parse};
use super::machine::{ClientLifecycle, ClientStateError, ServerNotification};
use super::machine::{ClientMachine, RequestSettings};
use super::pages::every_page;
use super::policy::{self, Outcome, PolicyRequest, RequestOptions};
use super::request::{AnyRequest, CallTool, ClientRequest, Complete, GetPrompt, ReadResource};
use crate::protocol::headers::{param_headers, tool_param_headers};
use crate::protocol::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, GetPromptParams,
    GetPromptResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, PromptDescriptor, ProtocolEra,
    ProtocolVersion, ReadResourceResult, ResourceDescriptor, ResourceTemplateDescriptor,
    ServerCapabilities, ToolDescriptor, method,
};
use crate::protocol::{ListenParams, SubscriptionFilter};
use crate::registry::Registry;
use crate::sync::MutexExt;

impl Client {
    /// A builder, to set the client's identity, handlers and version.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Connects in-process to `server` of `registry` with default settings.
    pub async fn in_process(registry: Registry, server: &str) -> Result<Client, ClientError> {
        Self::builder().connect_in_process(registry, server).await
    }

    /// Spawns `command` and connects over its stdio with default settings.
    #[cfg(feature = "client-stdio")]
    pub async fn stdio(command: tokio::process::Command) -> Result<Client, ClientError> {
        Self::builder().connect_stdio(command).await
    }

    /// Connects to the Streamable HTTP endpoint `url` with default settings.
    #[cfg(feature = "client-http")]
    pub async fn http(url: &str) -> Result<Client, ClientError> {
        Self::builder().connect_http(url).await
    }
    // ----- state ------------------------------------------------------------------------

    /// The lifecycle state.
    pub fn lifecycle(&self) -> ClientLifecycle {
        self.machine().lifecycle().clone()
    }

    /// The protocol version agreed on.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.machine().negotiated_version()
    }

    /// Who the server is.
    pub fn server_info(&self) -> Option<Implementation> {
        self.machine().server_info().cloned()
    }

    /// What the server offers.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.machine().server_capabilities().cloned()
    }

    /// The server's instructions for the model.
    pub fn instructions(&self) -> Option<String> {
        self.machine().instructions().map(str::to_owned)
    }

    /// How many requests await a reply.
    pub fn pending_count(&self) -> usize {
        self.machine().pending_count()
    }

    /// Notifications from the server from now on: progress, log messages, list changes,
    /// resource updates.
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.inner.notifications.subscribe()
    }

    /// Completes when the connection is gone (the server exited or hung up, the transport
    /// failed, or [`close`](Self::close) was called), with the reason.
    pub async fn closed(&self) -> String {
        self.inner.gone.cancelled().await;
        self.inner
            .closed
            .lock_unpoisoned()
            .clone()
            .unwrap_or_else(|| "the connection closed".into())
    }
    // ----- operations -------------------------------------------------------------------

    /// Checks the server is alive: `ping` (legacy), or `server/discover` on 2026-07-28,
    /// which has no `ping`.
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method_name = match self.machine().era() {
            Some(ProtocolEra::Modern) => method::DISCOVER,
            _ => method::PING,
        };
        self.call(&RequestOptions::default(), Vec::new(), |m, o, now| {
            m.request(method_name, None, o, now)
        })
        .await
        .map(|_| ())
    }

    /// Every tool, following `nextCursor` to the end. Over Streamable HTTP, tools with an
    /// invalid `x-mcp-header` annotation are left out (with a warning), as the spec
    /// requires. With [`ClientBuilder::tool_cache`], a listing younger than its TTL is
    /// answered from the cache.
    pub async fn list_tools(&self) -> Result<Vec<ToolDescriptor>, ClientError> {
        if let Some(ttl) = self.inner.settings.tool_cache
            && let Some((at, tools)) = self.inner.tool_cache.lock_unpoisoned().as_ref()
            && at.elapsed() < ttl
        {
            return Ok(tools.clone());
        }
        let fetched = tokio::time::Instant::now();
        let generation = self.inner.tool_cache_generation.load(Ordering::Acquire);
        let all = self.list_all_tools().await?;
        // A list change told while the listing was under way makes it stale already.
        if self.inner.settings.tool_cache.is_some()
            && self.inner.tool_cache_generation.load(Ordering::Acquire) == generation
        {
            *self.inner.tool_cache.lock_unpoisoned() = Some((fetched, all.clone()));
        }
        Ok(all)
    }

    /// Forgets the cached tool listing ([`ClientBuilder::tool_cache`]).
    pub fn invalidate_tool_cache(&self) {
        invalidate_tool_cache(&self.inner);
    }

    /// The server's tools that `filter` lets through, as tools of a server named `server`:
    /// each with its qualified name (`mcp__<server>__<tool>`). Several servers' definitions
    /// make one model-facing catalog with [`ToolCatalog::new`](crate::catalog::ToolCatalog::new).
    pub async fn tool_definitions(
        &self,
        server: &str,
        filter: &crate::catalog::ToolFilter,
    ) -> Result<Vec<crate::registry::ToolDefinition>, ClientError> {
        Ok(self
            .list_tools()
            .await?
            .into_iter()
            .filter(|tool| filter.decide_tool(server, tool).is_allowed())
            .map(|tool| crate::registry::ToolDefinition {
                server: server.to_owned(),
                qualified_name: crate::registry::qualified_name(server, &tool.name),
                tool,
            })
            .collect())
    }

    async fn list_all_tools(&self) -> Result<Vec<ToolDescriptor>, ClientError> {
        every_page(method::TOOLS_LIST, |cursor| async move {
            let page = self.list_tools_page(cursor).await?;
            Ok((page.tools, page.next_cursor))
        })
        .await
    }

    /// One page of tools, from `cursor`.
    pub async fn list_tools_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListToolsResult, ClientError> {
        let (method, result) = self
            .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                m.list_tools(cursor.clone(), now)
            })
            .await?;
        let mut page: ListToolsResult = parse(&method, result)?;
        self.remember_task_tools(&page.tools);
        if self.inner.transport.mirrors_tool_params() {
            let mut headers = self.inner.tool_headers.lock_unpoisoned();
            page.tools.retain(|tool| match tool_param_headers(&tool.input_schema) {
                Ok(found) => {
                    headers.insert(tool.name.clone(), found);
                    true
                }
                Err(reason) => {
                    tracing::warn!(tool = %tool.name, %reason, "MCP tool left out: invalid x-mcp-header");
                    false
                }
            });
        }
        Ok(page)
    }

    /// Calls tool `name` with `arguments` (an object, or `null` for none); set a timeout,
    /// cancellation, progress token or [`RequestPolicy`](super::RequestPolicy) on the returned
    /// [`ClientRequest`] before awaiting it.
    ///
    /// The policy (the request's, else the client's) runs first: its approval callback,
    /// then up to its retry count of further attempts for retryable failures, waiting its
    /// backoff between them (a cancellation during the wait ends the call). The call is
    /// traced as the policy describes. A task the server makes of the call is followed to
    /// its end.
    pub fn call_tool<'a>(&'a self, name: &'a str, arguments: Value) -> ClientRequest<CallTool<'a>> {
        ClientRequest::new(CallTool {
            client: self,
            name,
            arguments,
        })
    }

    /// Deprecated: `call_tool(name, arguments).options(options)`.
    #[deprecated(
        since = "0.1.0",
        note = "use `call_tool(name, arguments).options(options)`"
    )]
    #[doc(hidden)]
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.run_call_tool(name, arguments, &options).await
    }

    /// What [`call_tool`](Self::call_tool) runs.
    pub(super) async fn run_call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.guarded(method::TOOLS_CALL, name, arguments, options, |arguments| {
            self.call_tool_once(name, arguments, options)
        })
        .await
    }

    /// Runs `attempt` under the policy for `method` (the options', else the client's; see
    /// [`RequestPolicy`](super::RequestPolicy)), or once when there is none. `name` and `arguments`
    /// are what approval and telemetry see; approval may not change them.
    async fn guarded<T, F, Fut>(
        &self,
        method: &str,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
        mut attempt: F,
    ) -> Result<T, ClientError>
    where
        T: Outcome,
        F: FnMut(Value) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        let Some(policy) = self.inner.settings.policies.pick(method, options) else {
            return attempt(arguments).await;
        };
        let request = PolicyRequest {
            server: self.server_info().map(|i| i.name).unwrap_or_default(),
            method,
            name,
            arguments,
        };
        policy::run(&policy, request, options.cancellation.as_ref(), attempt).await
    }

    /// One attempt of a tool call: a task the server makes of it is followed to its end.
    async fn call_tool_once(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let result = self.send_tool_call(name, arguments, options, false).await?;
        match self.read_tool_task(name, result)? {
            super::ToolTask::Finished(result) => Ok(result),
            super::ToolTask::Started(task) => task.run_result(options).await,
        }
    }

    /// Sends `tools/call` (2025-11-25: with `task` when `as_task`, or when the tool runs
    /// only as a task); its raw result, after any multi round-trip rounds.
    pub(super) async fn send_tool_call(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
        as_task: bool,
    ) -> Result<Value, ClientError> {
        let arguments = match arguments {
            Value::Null => None,
            Value::Object(map) => Some(map),
            other => {
                return Err(ClientError::State(ClientStateError {
                    operation: format!(
                        "call {name} with arguments that are not an object: {other}"
                    ),
                    state: self.lifecycle(),
                }));
            }
        };
        let headers = match (
            &arguments,
            self.inner.tool_headers.lock_unpoisoned().get(name),
        ) {
            (Some(args), Some(found)) => param_headers(found, args),
            _ => Vec::new(),
        };
        let typed = CallToolParams {
            name: name.to_owned(),
            arguments,
            task: self.legacy_task(name, as_task),
            ..Default::default()
        };
        let build = |m: &mut ClientMachine, o: &RequestSettings, now| m.call_tool(&typed, o, now);
        self.call_with_input(
            method::TOOLS_CALL,
            || crate::protocol::params_of(&typed),
            build,
            options,
            headers,
        )
        .await
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_prompts(&self) -> Result<Vec<PromptDescriptor>, ClientError> {
        every_page(method::PROMPTS_LIST, |cursor| async move {
            let page = self.list_prompts_page(cursor).await?;
            Ok((page.prompts, page.next_cursor))
        })
        .await
    }

    /// One page of prompts, from `cursor`.
    pub async fn list_prompts_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListPromptsResult, ClientError> {
        let (method, result) = self
            .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                m.list_prompts(cursor.clone(), now)
            })
            .await?;
        parse(&method, result)
    }

    /// Gets prompt `name` with string `arguments`.
    pub fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: BTreeMap<String, String>,
    ) -> ClientRequest<GetPrompt<'a>> {
        ClientRequest::new(GetPrompt {
            client: self,
            name,
            arguments,
        })
    }

    /// What [`get_prompt`](Self::get_prompt) runs.
    pub(super) async fn run_get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        options: &RequestOptions,
    ) -> Result<GetPromptResult, ClientError> {
        let args = serde_json::to_value(&arguments).unwrap_or_default();
        let typed = GetPromptParams {
            name: name.to_owned(),
            arguments: Some(arguments).filter(|a| !a.is_empty()),
        };
        self.guarded(method::PROMPTS_GET, name, args, options, |_| async {
            let build =
                |m: &mut ClientMachine, o: &RequestSettings, now| m.get_prompt(&typed, o, now);
            let result = self
                .call_with_input(
                    method::PROMPTS_GET,
                    || crate::protocol::params_of(&typed),
                    build,
                    options,
                    Vec::new(),
                )
                .await?;
            parse(method::PROMPTS_GET, result)
        })
        .await
    }

    /// Every resource, following `nextCursor` to the end.
    pub async fn list_resources(&self) -> Result<Vec<ResourceDescriptor>, ClientError> {
        every_page(method::RESOURCES_LIST, |cursor| async move {
            let (method, result) = self
                .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                    m.list_resources(cursor.clone(), now)
                })
                .await?;
            let page: ListResourcesResult = parse(&method, result)?;
            Ok((page.resources, page.next_cursor))
        })
        .await
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_resource_templates(
        &self,
    ) -> Result<Vec<ResourceTemplateDescriptor>, ClientError> {
        every_page(method::RESOURCES_TEMPLATES_LIST, |cursor| async move {
            let (method, result) = self
                .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                    m.list_resource_templates(cursor.clone(), now)
                })
                .await?;
            let page: ListResourceTemplatesResult = parse(&method, result)?;
            Ok((page.resource_templates, page.next_cursor))
        })
        .await
    }

    /// Reads resource `uri`.
    pub fn read_resource<'a>(&'a self, uri: &'a str) -> ClientRequest<ReadResource<'a>> {
        ClientRequest::new(ReadResource { client: self, uri })
    }

    /// What [`read_resource`](Self::read_resource) runs.
    pub(super) async fn run_read_resource(
        &self,
        uri: &str,
        options: &RequestOptions,
    ) -> Result<ReadResourceResult, ClientError> {
        self.guarded(
            method::RESOURCES_READ,
            uri,
            Value::Null,
            options,
            |_| async {
                let params = || Map::from_iter([("uri".into(), Value::String(uri.to_owned()))]);
                let build =
                    |m: &mut ClientMachine, o: &RequestSettings, now| m.read_resource(uri, o, now);
                let result = self
                    .call_with_input(method::RESOURCES_READ, params, build, options, Vec::new())
                    .await?;
                parse(method::RESOURCES_READ, result)
            },
        )
        .await
    }

    /// Subscribes to updates of resource `uri` (`notifications/resources/updated`).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.call(&RequestOptions::default(), Vec::new(), |m, _, now| {
            m.subscribe(uri, now)
        })
        .await
        .map(|_| ())
    }

    /// Unsubscribes from resource `uri`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.call(&RequestOptions::default(), Vec::new(), |m, _, now| {
            m.unsubscribe(uri, now)
        })
        .await
        .map(|_| ())
    }

    /// `completion/complete`.
    pub fn complete(&self, params: CompleteParams) -> ClientRequest<Complete<'_>> {
        ClientRequest::new(Complete {
            client: self,
            params,
        })
    }

    /// What [`complete`](Self::complete) runs.
    pub(super) async fn run_complete(
        &self,
        params: CompleteParams,
        options: &RequestOptions,
    ) -> Result<CompleteResult, ClientError> {
        let (method, result) = self
            .call(options, Vec::new(), |m, _, now| m.complete(&params, now))
            .await?;
        parse(&method, result)
    }

    /// Sets the log level: `logging/setLevel` on a legacy server; on 2026-07-28 the level
    /// travels in every later request's `_meta`.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.machine().era() == Some(ProtocolEra::Modern) {
            self.machine().set_logging_level(level, Instant::now())?;
            return Ok(());
        }
        self.call(&RequestOptions::default(), Vec::new(), |m, _, now| {
            m.set_logging_level(level, now)?
                .ok_or_else(|| ClientStateError {
                    operation: "send logging/setLevel".into(),
                    state: m.lifecycle().clone(),
                })
        })
        .await
        .map(|_| ())
    }

    /// Any request by method and params; its raw result.
    pub fn request<'a>(
        &'a self,
        method: &'a str,
        params: Option<Map<String, Value>>,
    ) -> ClientRequest<AnyRequest<'a>> {
        ClientRequest::new(AnyRequest {
            client: self,
            method,
            params,
        })
    }

    /// What [`request`](Self::request) runs.
    pub(super) async fn run_request(
        &self,
        method_name: &str,
        params: Option<Map<String, Value>>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let arguments = params.clone().map(Value::Object).unwrap_or_default();
        self.guarded(method_name, "", arguments, options, |_| async {
            self.call(options, Vec::new(), |m, o, now| {
                m.request(method_name, params.clone(), o, now)
            })
            .await
            .map(|(_, result)| result)
        })
        .await
    }

    /// Listens for the server's notifications of the kinds `filter` opts in to (list
    /// changes, resource updates): they arrive on [`notifications`](Self::notifications).
    ///
    /// On 2026-07-28 this is a `subscriptions/listen` request, open until the server ends
    /// it (this then returns `Ok`), the connection goes, or `cancellation` is cancelled
    /// (the request is then cancelled on the wire and this returns
    /// [`ClientError::Cancelled`]); no timeout applies. A legacy server sends these
    /// notifications unasked (resource updates after
    /// [`subscribe_resource`](Self::subscribe_resource)): this then returns `Ok` at once.
    pub async fn listen(
        &self,
        filter: SubscriptionFilter,
        cancellation: CancellationToken,
    ) -> Result<(), ClientError> {
        if self.machine().era() != Some(ProtocolEra::Modern) {
            return Ok(());
        }
        let params = ListenParams {
            notifications: filter,
        };
        let request = self.machine().listen(&params, Instant::now())?;
        let method = request.method().to_owned();
        match self.exchange(request, None, Some(&cancellation)).await? {
            Reply::Result(_) => Ok(()),
            Reply::Error(error) => Err(ClientError::Server { method, error }),
            Reply::Closed(reason) => Err(ClientError::Closed(reason)),
            Reply::Failed(e) => Err(e.into()),
            Reply::Handshake(_) | Reply::TimedOut(_) => Err(ClientError::Handshake(
                "an unexpected handshake reply".into(),
            )),
        }
    }

    /// Tells the server the client's roots changed (`notifications/roots/list_changed`).
    pub async fn roots_list_changed(&self) -> Result<(), ClientError> {
        let note = self.machine().roots_list_changed();
        self.notify(note).await
    }

    /// Closes the connection: pending requests fail, the transport is closed (a child
    /// process is reaped).
    pub async fn close(&self) {
        self.machine().mark_shutting_down();
        self.fail_pending("the client closed".into());
        self.inner.transport.close().await;
        self.stop_tasks();
    }
}

impl Outcome for CallToolResult {
    fn outcome(&self) -> &'static str {
        if self.is_error == Some(true) {
            "tool_error"
        } else {
            "success"
        }
    }
}

impl Outcome for GetPromptResult {}
impl Outcome for ReadResourceResult {}
impl Outcome for Value {}
