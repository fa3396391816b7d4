-- Headless end-to-end test of the Doc Bridge Neovim plugin against the real language server.
--
-- Run by tests/test_nvim_e2e.py:
--   nvim --headless -u NONE -i NONE -n --cmd "set rtp^=<repo>/editors/nvim" -c "luafile <this file>"
-- with the environment:
--   DOCBRIDGE_E2E_ROOT    a copy of fixtures/acme (the rename step moves a document in it)
--   DOCBRIDGE_E2E_CMD     the absolute path of docbridge-lsp
--   DOCBRIDGE_E2E_REPORT  where to write the JSON report of every check
--   DOCBRIDGE_E2E_TIMEOUT_MS  how long to wait for the server (default 30000)
--   DOCBRIDGE_E2E_EXPECT  optional JSON overriding the expected values (EXPECT below)
-- Exits with :cquit when a check fails or the script errors, :qall! otherwise.

local root = assert(os.getenv("DOCBRIDGE_E2E_ROOT"), "DOCBRIDGE_E2E_ROOT is not set")
local server_cmd = assert(os.getenv("DOCBRIDGE_E2E_CMD"), "DOCBRIDGE_E2E_CMD is not set")
local report_path = assert(os.getenv("DOCBRIDGE_E2E_REPORT"), "DOCBRIDGE_E2E_REPORT is not set")
local timeout = tonumber(os.getenv("DOCBRIDGE_E2E_TIMEOUT_MS") or "") or 30000
-- The expected values come from the Python test (DOCBRIDGE_E2E_EXPECT, JSON); these are the defaults.
local EXPECT = {
  broken_link_line = 58, -- docs/architecture.md, 1-based: [old deployment notes](./deployment-v1.md)
  mention_line = 20, -- docs/billing.md, 1-based: `createInvoice` is re-exported by the barrel ...
  definition_file = "src/billing/invoice.ts",
  definition_line = 44, -- 1-based: export async function createInvoice(input: InvoiceInput) ...
  definition_col = 22, -- 0-based byte (= UTF-16) column of the name
  search_first_path = "src/billing/invoice.ts",
  handoff_ref = "acme-billing",
  handoff_start = "docs/for-agents/billing.md",
  orders_mention_line = 30, -- docs/orders.md, 1-based: 3. issues the invoice through `createInvoice` ...
  rename_from = "docs/storage.md",
  rename_to = "docs/ops/storage.md",
  rename_linker = "docs/deployment.md", -- links to storage.md#migrations
  doctor_grade = "B", -- no golden suite configured: hit@3 not analysed, no grade A
}
local given = os.getenv("DOCBRIDGE_E2E_EXPECT")
if given and given ~= "" then
  for key, value in pairs(vim.fn.json_decode(given)) do
    EXPECT[key] = value
  end
end

local started = vim.loop.hrtime()
local report = { checks = {}, notifications = {}, timings = {}, nvim = string.format("%d.%d.%d", vim.version().major, vim.version().minor, vim.version().patch) }
local failed = false

local function elapsed()
  return math.floor((vim.loop.hrtime() - started) / 1e6)
end

local function check(name, ok, detail)
  ok = ok and true or false
  table.insert(report.checks, { name = name, ok = ok, detail = detail and tostring(detail) or "" })
  if not ok then
    failed = true
  end
  io.stderr:write(string.format("[%6d ms] %s %s %s\n", elapsed(), ok and "ok  " or "FAIL", name, detail or ""))
  return ok
end

local function timing(name)
  report.timings[name] = elapsed()
end

local function finish()
  local log = (vim.fn.has("nvim-0.11") == 1 and vim.lsp.log and vim.lsp.log.get_filename) or vim.lsp.get_log_path
  report.lsp_log = log and log() or nil
  report.elapsed_ms = elapsed()
  local file = assert(io.open(report_path, "w"))
  file:write(vim.fn.json_encode(report))
  file:close()
  if failed then
    vim.cmd("cquit 1")
  else
    vim.cmd("qall!")
  end
end

local function ends_with(text, suffix)
  return type(text) == "string" and text:sub(-#suffix) == suffix
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end

local function find_buffer(name)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(bufnr) == name then
      return bufnr
    end
  end
  return nil
end

local function docbridge_clients(bufnr)
  local out = {}
  local list = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr })
    or (bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients())
  for _, client in pairs(list) do
    if client.name == "docbridge" then
      table.insert(out, client)
    end
  end
  return out
end

local function diagnostic_code(d)
  if d.code ~= nil then
    return d.code
  end
  return d.user_data and d.user_data.lsp and d.user_data.lsp.code
end

local function jump(location, encoding)
  if vim.lsp.util.show_document then
    return vim.lsp.util.show_document(location, encoding, { focus = true })
  end
  return vim.lsp.util.jump_to_location(location, encoding)
end

local function run()
  vim.cmd("filetype on")
  if vim.lsp.log and vim.lsp.log.set_level and vim.fn.has("nvim-0.11") == 1 then
    vim.lsp.log.set_level("debug")
  else
    vim.lsp.set_log_level("debug")
  end

  -- record notifications (and still show them on stderr)
  vim.notify = function(message, level)
    table.insert(report.notifications, { message = tostring(message), level = level })
    io.stderr:write(string.format("[%6d ms] notify(%s): %s\n", elapsed(), tostring(level), tostring(message)))
  end

  local attached = {}
  require("docbridge").setup({
    cmd = { server_cmd },
    settings = { docbridge = { diagnostics = { debounceMs = 0 } } },
    on_attach = function(client, bufnr)
      table.insert(attached, { client = client.id, bufnr = bufnr })
    end,
  })
  for _, command in ipairs({ "DocBridgeSearch", "DocBridgeHandoff", "DocBridgeReindex", "DocBridgeRename",
    "DocBridgeRender", "DocBridgeDoctor" }) do
    check("command :" .. command .. " exists", vim.fn.exists(":" .. command) == 2)
  end

  -- 1. diagnostics in docs/architecture.md -----------------------------------------------------------
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/docs/architecture.md"))
  local arch = vim.api.nvim_get_current_buf()
  check("architecture.md has filetype markdown", vim.bo[arch].filetype == "markdown", vim.bo[arch].filetype)
  local has_client = vim.wait(timeout, function()
    return #docbridge_clients(arch) > 0
  end, 20)
  timing("client_attached")
  local clients = docbridge_clients(arch)
  if
    not check("a docbridge client is attached to docs/architecture.md", has_client, "clients: " .. #clients)
  then
    return
  end
  local client = clients[1]
  check(
    "the client's root is the fixture copy",
    vim.loop.fs_realpath(client.config.root_dir) == vim.loop.fs_realpath(root),
    client.config.root_dir
  )
  check(
    "settings are passed to the client",
    client.config.settings.docbridge and client.config.settings.docbridge.diagnostics.debounceMs == 0,
    vim.inspect(client.config.settings)
  )

  local function ours(bufnr)
    local out = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.source == "docbridge" then
        table.insert(out, d)
      end
    end
    return out
  end
  local arrived = vim.wait(timeout, function()
    return #ours(arch) > 0
  end, 50)
  timing("diagnostics")
  local diagnostics = ours(arch)
  check(
    "docbridge diagnostics arrive for docs/architecture.md",
    arrived,
    string.format("%d docbridge diagnostics after %d ms (all: %d)", #diagnostics, elapsed(), #vim.diagnostic.get(arch))
  )
  local found, seen = nil, {}
  for _, d in ipairs(diagnostics) do
    table.insert(seen, string.format("%d:%s:%s", d.lnum + 1, tostring(diagnostic_code(d)), d.message))
    if diagnostic_code(d) == "LINK_BROKEN" and d.lnum + 1 == EXPECT.broken_link_line then
      found = d
    end
  end
  check(
    "LINK_BROKEN at docs/architecture.md:" .. EXPECT.broken_link_line,
    found ~= nil,
    "diagnostics: " .. table.concat(seen, " | ")
  )
  check(
    "the LINK_BROKEN diagnostic names ./deployment-v1.md",
    found ~= nil and found.message:find("deployment-v1.md", 1, true) ~= nil,
    found and found.message or "no diagnostic"
  )
  check(
    "the LINK_BROKEN diagnostic is an error",
    found ~= nil and found.severity == vim.diagnostic.severity.ERROR,
    found and tostring(found.severity) or "no diagnostic"
  )
  -- 1b. a second document, opened and asked for a definition at once (no waiting for its diagnostics) ----
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/docs/orders.md"))
  local orders = vim.api.nvim_get_current_buf()
  local orders_line = vim.api.nvim_buf_get_lines(orders, EXPECT.orders_mention_line - 1, EXPECT.orders_mention_line,
    false)[1] or ""
  local orders_col = orders_line:find("createInvoice", 1, true)
  vim.api.nvim_win_set_cursor(0, { EXPECT.orders_mention_line, (orders_col or 1) - 1 + 2 })
  local at_once = vim.lsp.buf_request_sync(orders, "textDocument/definition",
    vim.lsp.util.make_position_params(0, client.offset_encoding), timeout) or {}
  local answer = (at_once[client.id] or {}).result
  answer = type(answer) == "table" and answer[1] ~= nil and answer[1] or answer
  check(
    "definition right after opening docs/orders.md lands on the declaration",
    type(answer) == "table" and ends_with(answer.uri or "", EXPECT.definition_file)
      and answer.range.start.line + 1 == EXPECT.definition_line,
    vim.inspect(at_once)
  )
  -- 1c. an MDX page (no filetype before Neovim 0.10) gets the same client and its mentions resolve ----------
  local mdx_path = root .. "/docs/invoicing.mdx"
  local mdx_file = assert(io.open(mdx_path, "w"))
  mdx_file:write("import Note from '../components/Note'\n\n# Invoicing\n\n<Note>Invoices come from `createInvoice`.</Note>\n")
  mdx_file:close()
  vim.cmd("edit " .. vim.fn.fnameescape(mdx_path))
  local mdx = vim.api.nvim_get_current_buf()
  vim.wait(timeout, function()
    return #docbridge_clients(mdx) > 0
  end, 20)
  check("the same client is attached to an MDX page", (docbridge_clients(mdx)[1] or {}).id == client.id,
    "filetype: " .. vim.bo[mdx].filetype)
  local mdx_col = (vim.api.nvim_buf_get_lines(mdx, 4, 5, false)[1] or ""):find("createInvoice", 1, true)
  vim.api.nvim_win_set_cursor(0, { 5, (mdx_col or 1) - 1 + 2 })
  local mdx_answer = vim.lsp.buf_request_sync(mdx, "textDocument/definition",
    vim.lsp.util.make_position_params(0, client.offset_encoding), timeout) or {}
  local mdx_location = (mdx_answer[client.id] or {}).result
  mdx_location = type(mdx_location) == "table" and mdx_location[1] ~= nil and mdx_location[1] or mdx_location
  check(
    "definition from the MDX page lands on the declaration",
    type(mdx_location) == "table" and ends_with(mdx_location.uri or "", EXPECT.definition_file)
      and mdx_location.range.start.line + 1 == EXPECT.definition_line,
    vim.inspect(mdx_answer)
  )
  vim.cmd("bwipeout! " .. mdx)
  os.remove(mdx_path)
  vim.cmd("buffer " .. arch)

  -- docbridge/status "ready" follows the diagnostics the scan published
  vim.wait(timeout, function()
    local current = require("docbridge").status(client.id)
    return current ~= nil and current.state == "ready"
  end, 20)
  local status = require("docbridge").status(client.id)
  check(
    "docbridge/status reports ready",
    status ~= nil and status.state == "ready" and (status.files or 0) > 0,
    vim.inspect(status)
  )

  -- 2. go to definition from `createInvoice` in docs/billing.md ------------------------------------------
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/docs/billing.md"))
  local billing = vim.api.nvim_get_current_buf()
  vim.wait(timeout, function()
    return #docbridge_clients(billing) > 0
  end, 20)
  check("the same client is reused for docs/billing.md", (docbridge_clients(billing)[1] or {}).id == client.id)
  local line = vim.api.nvim_buf_get_lines(billing, EXPECT.mention_line - 1, EXPECT.mention_line, false)[1] or ""
  local col = line:find("createInvoice", 1, true)
  check("docs/billing.md:" .. EXPECT.mention_line .. " mentions createInvoice", col ~= nil, line)
  vim.api.nvim_win_set_cursor(0, { EXPECT.mention_line, (col or 1) - 1 + 3 }) -- inside the name
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local responses = vim.lsp.buf_request_sync(billing, "textDocument/definition", params, 10000) or {}
  timing("definition")
  local response = responses[client.id] or {}
  local result = response.result
  local location = result
  if type(result) == "table" and result[1] ~= nil then
    location = result[1]
  end
  if
    check(
      "textDocument/definition returns a location",
      type(location) == "table" and (location.uri or location.targetUri) ~= nil,
      vim.inspect(response)
    )
  then
    jump(location, client.offset_encoding)
    local name = vim.api.nvim_buf_get_name(0)
    local cursor = vim.api.nvim_win_get_cursor(0)
    check("definition opens " .. EXPECT.definition_file, ends_with(name, EXPECT.definition_file), name)
    check(
      string.format("definition cursor at %d:%d", EXPECT.definition_line, EXPECT.definition_col),
      cursor[1] == EXPECT.definition_line and cursor[2] == EXPECT.definition_col,
      string.format("cursor %d:%d, range %s", cursor[1], cursor[2], vim.inspect(location.range or location.targetSelectionRange))
    )
    local word = vim.fn.expand("<cword>")
    check("the cursor is on the word createInvoice", word == "createInvoice", word)
  end

  -- 3. :DocBridgeSearch createInvoice with a stubbed vim.ui.select ------------------------------------------
  vim.cmd("buffer " .. billing)
  local select_calls = {}
  local original_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    local formatted = {}
    for i, item in ipairs(items) do
      formatted[i] = opts.format_item and opts.format_item(item) or tostring(item)
    end
    table.insert(select_calls, { items = items, formatted = formatted, prompt = opts.prompt })
    on_choice(items[1], 1)
  end
  vim.cmd("DocBridgeSearch createInvoice")
  local selected = vim.wait(timeout, function()
    return #select_calls > 0
  end, 20)
  timing("search")
  vim.ui.select = original_select
  if check("vim.ui.select is called with the results", selected, #select_calls .. " calls") then
    local call = select_calls[1]
    local first = call.items[1] or {}
    check(
      "the first result is the module " .. EXPECT.search_first_path,
      first.kind == "module" and first.path == EXPECT.search_first_path,
      string.format("first: %s %s; %d results", tostring(first.kind), tostring(first.path), #call.items)
    )
    check(
      "results are formatted as 'title — path (kind)'",
      call.formatted[1] == string.format("%s — %s (%s)", first.title, first.path, first.kind),
      call.formatted[1]
    )
    local opened = vim.wait(5000, function()
      return ends_with(vim.api.nvim_buf_get_name(0), EXPECT.search_first_path)
    end, 20)
    check("choosing the first result opens " .. EXPECT.search_first_path, opened, vim.api.nvim_buf_get_name(0))
    local cursor = vim.api.nvim_win_get_cursor(0)
    local start = first.location and first.location.range and first.location.range.start or {}
    check(
      "the cursor is at the result's range start",
      cursor[1] == (start.line or -1) + 1,
      string.format("cursor %d:%d, start %s", cursor[1], cursor[2], vim.inspect(start))
    )
  end

  -- 4. :DocBridgeSearch! billing fills the quickfix list ----------------------------------------------------
  vim.fn.setqflist({}, "r", { title = "empty", items = {} })
  vim.cmd("DocBridgeSearch! billing")
  local filled = vim.wait(timeout, function()
    return #vim.fn.getqflist() > 0
  end, 20)
  timing("quickfix")
  local qf = vim.fn.getqflist()
  local first_qf = qf[1] and (vim.api.nvim_buf_get_name(qf[1].bufnr) .. ": " .. qf[1].text) or "none"
  check("DocBridgeSearch! billing fills the quickfix list", filled and #qf > 0, #qf .. " items; first: " .. first_qf)
  local qf_open = false
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.bo[vim.api.nvim_win_get_buf(win)].buftype == "quickfix" then
      qf_open = true
    end
  end
  check("the quickfix window is open", qf_open)
  vim.cmd("cclose")

  -- 5. :DocBridgeHandoff <ref> opens a scratch buffer ------------------------------------------------
  local handoff_name = "docbridge://handoff/" .. EXPECT.handoff_ref
  vim.cmd("DocBridgeHandoff " .. EXPECT.handoff_ref)
  local shown = vim.wait(timeout, function()
    return find_buffer(handoff_name) ~= nil
  end, 20)
  timing("handoff")
  local handoff = find_buffer(handoff_name)
  if check("a buffer named " .. handoff_name .. " exists", shown and handoff ~= nil) then
    local text = buffer_text(handoff)
    check("the handoff names its start document " .. EXPECT.handoff_start, text:find(EXPECT.handoff_start, 1, true) ~= nil,
      text:sub(1, 400))
    check(
      "the handoff buffer is a markdown scratch buffer",
      vim.bo[handoff].buftype == "nofile" and vim.bo[handoff].filetype == "markdown",
      vim.bo[handoff].buftype .. "/" .. vim.bo[handoff].filetype
    )
    check("the handoff buffer is shown", vim.api.nvim_get_current_buf() == handoff)
    check("no client is attached to the handoff buffer", #docbridge_clients(handoff) == 0)
  end

  -- 6. an unknown reference is reported with the server's message ------------------------------------------
  local before = #report.notifications
  vim.cmd("DocBridgeHandoff no-such-ref-xyz")
  local notified = vim.wait(timeout, function()
    for i = before + 1, #report.notifications do
      if report.notifications[i].level == vim.log.levels.ERROR then
        return true
      end
    end
    return false
  end, 20)
  local message = (report.notifications[#report.notifications] or {}).message or ""
  check("an unknown handoff reference is notified as an error", notified and message:find("no-such-ref-xyz", 1, true),
    message)
  check("no buffer is opened for an unknown reference", find_buffer("docbridge://handoff/no-such-ref-xyz") == nil)

  -- 7. :DocBridgeHandoff without a reference uses the current file ------------------------------------------
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/docs/billing.md"))
  vim.cmd("DocBridgeHandoff")
  local own = vim.wait(timeout, function()
    return find_buffer("docbridge://handoff/docs/billing.md") ~= nil
  end, 20)
  check("DocBridgeHandoff without a ref shows the current file's handoff", own)

  -- 8. :DocBridgeReindex ---------------------------------------------------------------------------------
  before = #report.notifications
  vim.cmd("DocBridgeReindex")
  local reindexed = vim.wait(timeout, function()
    for i = before + 1, #report.notifications do
      if report.notifications[i].message:match("^Doc Bridge reindexed %d+ files in [%d.]+ s$") then
        return true
      end
    end
    return false
  end, 20)
  timing("reindex")
  check("DocBridgeReindex notifies 'Doc Bridge reindexed N files in S s'", reindexed,
    (report.notifications[#report.notifications] or {}).message)

  -- 8b. :DocBridgeDoctor (before the rendered page of 8c adds a document) ----------------------------------
  vim.cmd("DocBridgeDoctor")
  local shown = vim.wait(timeout, function()
    return find_buffer("docbridge://doctor") ~= nil
  end, 20)
  local doctor = find_buffer("docbridge://doctor")
  local first_line = doctor and (vim.api.nvim_buf_get_lines(doctor, 0, 1, false)[1] or "") or ""
  check("DocBridgeDoctor shows the report with grade " .. EXPECT.doctor_grade,
    shown and first_line:find("grade " .. EXPECT.doctor_grade, 1, true) == 1, first_line)
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/docs/billing.md"))
  local line = require("docbridge").statusline()
  check("the statusline shows the grade", line:find("grade " .. EXPECT.doctor_grade, 1, true) ~= nil, line)
  -- 8c. :DocBridgeRender writes one area page -------------------------------------------------------------
  before = #report.notifications
  vim.cmd("DocBridgeRender area src/billing")
  local rendered = vim.wait(timeout, function()
    for i = before + 1, #report.notifications do
      if report.notifications[i].message == "Doc Bridge rendered area: 1 page written, 0 unchanged" then
        return true
      end
    end
    return false
  end, 20)
  check("DocBridgeRender notifies 'Doc Bridge rendered area: 1 page written, 0 unchanged'", rendered,
    (report.notifications[#report.notifications] or {}).message)
  check("DocBridgeRender wrote docs/areas/src-billing.md",
    vim.fn.filereadable(root .. "/docs/areas/src-billing.md") == 1)
end

local function rename()
  -- 9. :DocBridgeRename moves a document and rewrites the links to it -------------------------------------
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. EXPECT.rename_linker))
  local linker = vim.api.nvim_get_current_buf()
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. EXPECT.rename_from))
  local moved = vim.api.nvim_get_current_buf()
  vim.wait(timeout, function()
    return #docbridge_clients(moved) > 0
  end, 20)
  vim.cmd("DocBridgeRename " .. vim.fn.fnameescape(root .. "/" .. EXPECT.rename_to))
  local done = vim.wait(timeout, function()
    return ends_with(vim.api.nvim_buf_get_name(moved), EXPECT.rename_to)
  end, 20)
  timing("rename")
  check("DocBridgeRename renames the buffer", done, vim.api.nvim_buf_get_name(moved))
  check("the file is at its new path", vim.loop.fs_stat(root .. "/" .. EXPECT.rename_to) ~= nil
    and vim.loop.fs_stat(root .. "/" .. EXPECT.rename_from) == nil)
  local linking = buffer_text(linker)
  check("the linking document now links to ops/storage.md", linking:find("(ops/storage.md#migrations)", 1, true) ~= nil,
    linking:sub(1, 2000))
  vim.cmd("silent wall")
  vim.cmd("buffer " .. linker)
  local clean = vim.wait(timeout, function()
    for _, d in ipairs(vim.diagnostic.get(linker)) do
      if diagnostic_code(d) == "LINK_BROKEN" then
        return false
      end
    end
    return true
  end, 50)
  check("no broken link is reported in the linking document", clean)
end

local ok, err = xpcall(function()
  run()
  rename()
end, debug.traceback)
if not ok then
  check("the test script ran without errors", false, err)
end
finish()
