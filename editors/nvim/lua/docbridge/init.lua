-- Doc Bridge for Neovim: starts the Doc Bridge language server (`docbridge-lsp`) for Markdown and
-- JavaScript/TypeScript buffers and adds :DocBridgeSearch, :DocBridgeHandoff, :DocBridgeReindex and
-- :DocBridgeDoctor; :DocBridgeInstall sets the server up in a private environment.
--
-- Works on Neovim 0.7 (vim.lsp.start_client + vim.lsp.buf_attach_client) and on newer versions
-- (vim.lsp.start). See :help docbridge.

local M = {}

local api = vim.api
local uv = vim.loop or vim.uv

local NAME = "docbridge"
local GROUP = "DocBridge"

local defaults = {
  cmd = { "docbridge-lsp" },
  filetypes = { "markdown", "mdx", "markdown.mdx", "typescript", "typescriptreact", "javascript", "javascriptreact" },
  root_markers = { "doc-bridge.config.json", ".git" },
  settings = {},
  on_attach = nil,
  capabilities = nil,
  autostart = true,
  search_limit = 50,
  install_source = nil, -- what :DocBridgeInstall installs (default: the checkout this plugin is part of)
}

M.config = vim.deepcopy(defaults)

local clients_by_root = {} -- root -> client id (Neovim 0.7 path)
local statuses = {} -- client id -> last docbridge/status params
local grades = {} -- client id -> the last doctor grade ("A".."F") of its first folder
local warned_cmd = false

-- ------------------------------------------------------------------------------------------ helpers

local function has(feature)
  return vim.fn.has(feature) == 1
end

local function notify(message, level)
  vim.notify("Doc Bridge: " .. message, level or vim.log.levels.INFO)
end

local function get_client_by_id(id)
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Every running Doc Bridge client (optionally only those attached to `bufnr`).
local function get_clients(bufnr)
  local out = {}
  if vim.lsp.get_clients then
    out = vim.lsp.get_clients({ name = NAME, bufnr = bufnr })
  elseif bufnr then
    for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
      if client.name == NAME then
        table.insert(out, client)
      end
    end
  else
    for _, client in pairs(vim.lsp.get_active_clients()) do
      if client.name == NAME then
        table.insert(out, client)
      end
    end
  end
  return out
end

local function is_stopped(client)
  if not client then
    return true
  end
  if has("nvim-0.11") then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- `client.request` on 0.7-0.10, `client:request` on 0.11+ (the dot form is deprecated there).
local function client_request(client, method, params, handler, bufnr)
  if has("nvim-0.11") then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function is_dir(path)
  local stat = uv.fs_stat(path)
  return stat ~= nil and stat.type == "directory"
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function dirname(path)
  local parent = vim.fn.fnamemodify(path, ":h")
  return parent
end

--- The nearest directory above `path` holding `marker`, or nil.
local function find_upward(start, marker)
  local dir = start
  while dir and dir ~= "" do
    if exists(dir .. "/" .. marker) then
      return dir
    end
    local parent = dirname(dir)
    if parent == dir then
      return nil
    end
    dir = parent
  end
  return nil
end

--- The project root of a file: the nearest directory with the first root marker, else the second, ...,
--- else the file's own directory.
function M.find_root(path, markers)
  markers = markers or M.config.root_markers
  path = vim.fn.fnamemodify(path, ":p")
  local start = is_dir(path) and path or dirname(path)
  start = start:gsub("/+$", "")
  if start == "" then
    start = "/"
  end
  for _, marker in ipairs(markers) do
    local root = find_upward(start, marker)
    if root then
      return root
    end
  end
  return start
end

local function normalize_settings(settings)
  settings = settings or {}
  if type(settings.docbridge) == "table" then
    return settings
  end
  if next(settings) == nil then
    return { docbridge = vim.empty_dict and vim.empty_dict() or {} }
  end
  return { docbridge = settings }
end

local function status_handler(err, result, ctx)
  if err or type(result) ~= "table" then
    return
  end
  local client_id = ctx and ctx.client_id
  if client_id then
    statuses[client_id] = result
  end
  if result.state == "error" then
    notify(result.message or "the scan failed", vim.log.levels.ERROR)
  end
  pcall(vim.cmd, "doautocmd <nomodeline> User DocBridgeStatus")
end

--- Handlers for the server's custom notifications; add them to a client started another way (lspconfig).
M.handlers = { ["docbridge/status"] = status_handler }

--- The client tells the server it sends willRenameFiles/didRenameFiles (:DocBridgeRename does, and so do
--- file-explorer plugins on Neovim 0.10+), so that rename edits may move files.
local function with_file_operations(capabilities)
  capabilities = vim.deepcopy(capabilities)
  capabilities.workspace = capabilities.workspace or {}
  capabilities.workspace.fileOperations = vim.tbl_extend("keep", capabilities.workspace.fileOperations or {}, {
    dynamicRegistration = false,
    willRename = true,
    didRename = true,
  })
  capabilities.workspace.workspaceEdit = vim.tbl_extend("keep", capabilities.workspace.workspaceEdit or {}, {
    documentChanges = true,
    resourceOperations = { "rename" },
  })
  return capabilities
end

local function client_config(root)
  local config = M.config
  local settings = normalize_settings(config.settings)
  return {
    name = NAME,
    cmd = M.server_cmd() or config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    settings = settings,
    init_options = { docbridge = settings.docbridge },
    capabilities = with_file_operations(config.capabilities or vim.lsp.protocol.make_client_capabilities()),
    handlers = vim.tbl_extend("force", {}, M.handlers, config.handlers or {}),
    on_attach = config.on_attach,
    on_exit = function(_, _, client_id)
      statuses[client_id] = nil
      for root_dir, id in pairs(clients_by_root) do
        if id == client_id then
          clients_by_root[root_dir] = nil
        end
      end
    end,
  }
end

-- ------------------------------------------------------------------------------------------ the server

local is_windows = vim.fn.has("win32") == 1

--- Where :DocBridgeInstall keeps its private environment (under Neovim's data folder).
function M.install_dir()
  return vim.fn.stdpath("data") .. "/docbridge/venv"
end

--- The server of that environment (whether or not it exists).
function M.installed_server()
  return M.install_dir() .. (is_windows and "/Scripts/docbridge-lsp.exe" or "/bin/docbridge-lsp")
end

--- The Doc Bridge checkout this plugin is part of (the plugin is its editors/nvim folder), if it is one.
function M.default_source()
  local this = debug.getinfo(1, "S").source:gsub("^@", "")
  local repository = vim.fn.fnamemodify(this, ":p:h:h:h:h:h")
  if exists(repository .. "/pyproject.toml") and exists(repository .. "/lsp") then
    return repository
  end
  return nil
end

--- The command that starts the server: the configured one; when none was configured and `docbridge-lsp` is not
--- on PATH, the one :DocBridgeInstall set up.
function M.server_cmd()
  local cmd = M.config.cmd
  local program = type(cmd) == "table" and cmd[1] or nil
  if type(program) == "string" and vim.fn.executable(program) == 1 then
    return cmd
  end
  if not M.config.cmd_given and vim.fn.executable(M.installed_server()) == 1 then
    return { M.installed_server() }
  end
  return nil
end

local function cmd_executable()
  if M.server_cmd() ~= nil then
    return true
  end
  if not warned_cmd then
    warned_cmd = true
    local program = type(M.config.cmd) == "table" and M.config.cmd[1] or nil
    notify(
      string.format(
        "the language server command %s is not executable. Run :DocBridgeInstall to set it up in a private "
          .. "environment, install the Doc Bridge Python package so that `docbridge-lsp` is on your PATH, or pass "
          .. "the absolute path: require('docbridge').setup({ cmd = { '/path/to/.venv/bin/docbridge-lsp' } })",
        vim.inspect(program)
      ),
      vim.log.levels.ERROR
    )
  end
  return false
end

local PYTHONS = { "python3.14", "python3.13", "python3.12", "python3.11", "python3", "python" }
local VERSION_PROBE = "import sys; print('%d.%d.%d' % sys.version_info[:3])"

--- The first Python 3.11 or newer on PATH, and what the others turned out to be.
function M.find_python()
  local tried = {}
  for _, name in ipairs(is_windows and { "py", "python", "python3" } or PYTHONS) do
    if vim.fn.executable(name) == 1 then
      local argv = name == "py" and { name, "-3", "-c", VERSION_PROBE } or { name, "-c", VERSION_PROBE }
      local out = vim.fn.system(argv)
      local major, minor = out:match("^(%d+)%.(%d+)%.%d+%s*$")
      if vim.v.shell_error == 0 and major then
        if tonumber(major) > 3 or (tonumber(major) == 3 and tonumber(minor) >= 11) then
          return argv[1] == "py" and { "py", "-3" } or { name }, vim.trim(out), tried
        end
        table.insert(tried, name .. ": " .. vim.trim(out))
      end
    end
  end
  return nil, nil, tried
end

--- Runs `argv`; `done(code, output)` when it ends. With `wait`, blocks until then (a build step, a script).
local function run(argv, wait, done)
  if wait then
    local output = vim.fn.system(argv)
    done(vim.v.shell_error, output)
    return
  end
  local output = {}
  local function collect(_, data)
    for _, line in ipairs(data or {}) do
      if line ~= "" then
        table.insert(output, line)
      end
    end
  end
  local job = vim.fn.jobstart(argv, {
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(_, code)
      done(code, table.concat(output, "\n"))
    end,
  })
  if job <= 0 then
    done(-1, "could not start " .. argv[1])
  end
end

local function last_lines(text, count)
  local lines = vim.split(vim.trim(text or ""), "\n", { plain = true, trimempty = true })
  return table.concat(vim.list_slice(lines, math.max(1, #lines - count + 1)), " ")
end

--- Set the server up in a private environment (M.install_dir()): a Python 3.11+ found on PATH makes it, and pip
--- installs Doc Bridge into it from `opts.source` (a checkout, a wheel or a requirement; default: the checkout
--- this plugin belongs to) with its dependencies. `opts.wait` blocks until done (lazy.nvim's `build`);
--- `opts.on_done(ok, message)` is called at the end. Buffers already open are attached once it is done.
function M.install(opts)
  opts = opts or {}
  local function finish(ok, message)
    notify(message, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
    if ok then
      warned_cmd = false
      M.attach_open_buffers()
    end
    if opts.on_done then
      opts.on_done(ok, message)
    end
    return ok
  end
  local source = opts.source or M.config.install_source or M.default_source()
  if source == nil then
    return finish(false, "no source to install from: pass one, :DocBridgeInstall /path/to/doc-bridge (a checkout "
      .. "or a wheel)")
  end
  local python, version, tried = M.find_python()
  if python == nil then
    local found = #tried > 0 and (" Found: " .. table.concat(tried, "; ") .. ".") or " None was found on PATH."
    return finish(false, "setting up the language server needs Python 3.11 or newer." .. found)
  end
  local dir = M.install_dir()
  vim.fn.delete(dir, "rf")
  vim.fn.mkdir(vim.fn.fnamemodify(dir, ":h"), "p")
  notify(string.format("setting up the language server with %s (%s) from %s…", python[1], version, source),
    vim.log.levels.INFO)
  local venv = vim.list_extend(vim.deepcopy(python), { "-m", "venv", dir })
  local result
  run(venv, opts.wait, function(code, output)
    if code ~= 0 then
      result = finish(false, "creating a Python environment failed: " .. last_lines(output, 3))
      return
    end
    local pip = dir .. (is_windows and "/Scripts/python.exe" or "/bin/python")
    local install = { pip, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", source }
    run(install, opts.wait, function(pip_code, pip_output)
      if pip_code ~= 0 or vim.fn.executable(M.installed_server()) ~= 1 then
        result = finish(false, "installing the language server failed: " .. last_lines(pip_output, 3))
      else
        result = finish(true, "the language server is set up: " .. M.installed_server())
      end
    end)
  end)
  return result
end

--- Whether a buffer is a file Doc Bridge should look at.
local function is_file_buffer(bufnr)
  if not api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = api.nvim_buf_get_name(bufnr)
  return name ~= "" and not name:match("^%a[%w+.-]*://")
end

--- Start (or reuse: one client per root) the server and attach it to `bufnr`. Returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if not is_file_buffer(bufnr) then
    return nil
  end
  if not cmd_executable() then
    return nil
  end
  local root = M.find_root(api.nvim_buf_get_name(bufnr))
  local config = client_config(root)

  if vim.lsp.start then
    local id
    api.nvim_buf_call(bufnr, function()
      id = vim.lsp.start(config, {
        bufnr = bufnr,
        reuse_client = function(client, conf)
          return client.name == conf.name and client.config.root_dir == conf.root_dir
        end,
      })
    end)
    return id
  end

  local id = clients_by_root[root]
  if id == nil or is_stopped(get_client_by_id(id)) then
    id = vim.lsp.start_client(config)
    if not id then
      notify("could not start " .. vim.inspect(config.cmd), vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The client to send commands to: the one attached to the current buffer, else the first running one.
function M.client(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local attached = get_clients(bufnr)
  if attached[1] then
    return attached[1]
  end
  return get_clients(nil)[1]
end

--- The last `docbridge/status` notification of a client (default: the current buffer's), or nil.
function M.status(client_id)
  if client_id == nil then
    local client = M.client()
    client_id = client and client.id
  end
  return client_id and statuses[client_id] or nil
end

--- A short status string for a statusline: "Doc Bridge: scanning…", "Doc Bridge: 3 findings", or "".
function M.statusline()
  local status = M.status()
  if not status then
    return ""
  end
  if status.state == "scanning" then
    return "Doc Bridge: scanning…"
  elseif status.state == "error" then
    return "Doc Bridge: error"
  end
  local client = M.client()
  local grade = client and grades[client.id]
  return string.format("Doc Bridge: %d findings", status.findings or 0) .. (grade and (" · grade " .. grade) or "")
end

--- Run a server command: callback(err, result, client). `arguments` is the positional argument list.
function M.execute(command, arguments, callback, bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    local message = "no Doc Bridge server is running; open a Markdown, TypeScript or JavaScript file of the project first"
    if callback then
      callback({ message = message }, nil, nil)
    else
      notify(message, vim.log.levels.ERROR)
    end
    return
  end
  local params = { command = command, arguments = arguments or {} }
  client_request(client, "workspace/executeCommand", params, function(err, result)
    if callback then
      callback(err, result, client)
    end
  end, bufnr)
end

local function error_message(err)
  if type(err) == "table" then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

-- ------------------------------------------------------------------------------------------ search

local function offset_encoding(client)
  return (client and client.offset_encoding) or "utf-16"
end

--- Open a location (LSP Location), with the tag stack / jumplist updated.
function M.jump(location, encoding)
  if vim.lsp.util.show_document then
    return vim.lsp.util.show_document(location, encoding, { focus = true })
  end
  return vim.lsp.util.jump_to_location(location, encoding)
end

function M.format_item(item)
  return string.format("%s — %s (%s)", item.title or item.id or "?", item.path or "?", item.kind or "?")
end

local function open_result(item, client)
  if not item then
    return
  end
  if type(item.location) == "table" and item.location.uri then
    M.jump(item.location, offset_encoding(client))
    return
  end
  if item.path and client and client.config.root_dir then
    vim.cmd("edit " .. vim.fn.fnameescape(client.config.root_dir .. "/" .. item.path))
    return
  end
  notify("the result " .. M.format_item(item) .. " has no file to open", vim.log.levels.WARN)
end

local function to_quickfix(results)
  local items = {}
  for _, item in ipairs(results) do
    local entry = { text = M.format_item(item) }
    if type(item.location) == "table" and item.location.uri then
      entry.filename = vim.uri_to_fname(item.location.uri)
      local start = item.location.range and item.location.range.start or {}
      entry.lnum = (start.line or 0) + 1
      entry.col = (start.character or 0) + 1
    end
    if item.summary and item.summary ~= vim.NIL and item.summary ~= "" then
      entry.text = entry.text .. ": " .. item.summary
    end
    table.insert(items, entry)
  end
  return items
end

--- :DocBridgeSearch {query}; with `quickfix` the results fill the quickfix list instead of vim.ui.select.
function M.search(query, quickfix)
  query = vim.trim(query or "")
  if query == "" then
    notify("give a query: :DocBridgeSearch {query}", vim.log.levels.WARN)
    return
  end
  M.execute("docbridge.search", { query, M.config.search_limit }, function(err, result, client)
    if err then
      notify("search failed: " .. error_message(err), vim.log.levels.ERROR)
      return
    end
    local results = type(result) == "table" and result.results or {}
    if type(results) ~= "table" or #results == 0 then
      local scanning = type(result) == "table" and result.scanning == true
      notify(
        "no results for " .. vim.inspect(query) .. (scanning and " (the server is still scanning)" or ""),
        vim.log.levels.WARN
      )
      return
    end
    if quickfix then
      vim.fn.setqflist({}, " ", { title = "Doc Bridge: " .. query, items = to_quickfix(results) })
      vim.cmd("copen")
      return
    end
    vim.ui.select(results, {
      prompt = "Doc Bridge: " .. query,
      format_item = M.format_item,
      kind = "docbridge",
    }, function(choice)
      open_result(choice, client)
    end)
  end)
end

-- ------------------------------------------------------------------------------------------ handoff

local function relative_path(path, root)
  path = vim.fn.fnamemodify(path, ":p")
  root = vim.fn.fnamemodify(root, ":p"):gsub("/+$", "")
  local real_path, real_root = uv.fs_realpath(path) or path, uv.fs_realpath(root) or root
  for _, pair in ipairs({ { path, root }, { real_path, real_root } }) do
    local p, r = pair[1], pair[2]
    if p:sub(1, #r + 1) == r .. "/" then
      return p:sub(#r + 2)
    end
  end
  return nil
end

--- Show markdown `text` in a scratch buffer named `docbridge://handoff/<ref>`.
local function show_scratch(name, text)
  local bufnr = -1
  for _, candidate in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(candidate) == name then
      bufnr = candidate
      break
    end
  end
  if bufnr == -1 then
    bufnr = api.nvim_create_buf(true, true)
    api.nvim_buf_set_name(bufnr, name)
  end
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].modifiable = true
  api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split((text:gsub("\n$", "")), "\n", { plain = true }))
  vim.bo[bufnr].modified = false
  vim.bo[bufnr].filetype = "markdown"
  local win = vim.fn.bufwinid(bufnr)
  if win ~= -1 then
    api.nvim_set_current_win(win)
  else
    vim.cmd("split")
    api.nvim_win_set_buf(0, bufnr)
  end
  return bufnr
end

--- :DocBridgeHandoff [ref]; without a ref, the current file's path relative to the project root.
function M.handoff(ref)
  ref = vim.trim(ref or "")
  local bufnr = api.nvim_get_current_buf()
  if ref == "" then
    local client = M.client(bufnr)
    local name = api.nvim_buf_get_name(bufnr)
    local root = (client and client.config.root_dir) or (name ~= "" and M.find_root(name)) or nil
    ref = (name ~= "" and root) and relative_path(name, root) or nil
    if not ref then
      notify("give a reference (:DocBridgeHandoff {ref}) or run it from a file of the project", vim.log.levels.WARN)
      return
    end
  end
  M.execute("docbridge.handoff", { ref }, function(err, result)
    if err then
      notify(error_message(err), vim.log.levels.ERROR)
      return
    end
    if type(result) ~= "table" or type(result.markdown) ~= "string" then
      notify("the server returned no handoff for " .. ref, vim.log.levels.ERROR)
      return
    end
    show_scratch("docbridge://handoff/" .. ref, result.markdown)
  end, bufnr)
end

-- ------------------------------------------------------------------------------------------ reindex

function M.reindex()
  M.execute("docbridge.reindex", {}, function(err, result)
    if err then
      notify("reindex failed: " .. error_message(err), vim.log.levels.ERROR)
      return
    end
    result = type(result) == "table" and result or {}
    vim.notify(string.format("Doc Bridge reindexed %s files in %s s", tostring(result.files or 0),
      tostring(result.seconds or 0)), vim.log.levels.INFO)
  end)
end

-- ------------------------------------------------------------------------------------------ render

M.render_templates = { "area", "ownership", "llms.txt", "change-digest", "overlay-review" }

--- Write generated documentation (`docbridge.render`): `template` (default "area") and, for area or
--- ownership, one area path or record id (default: every page). Reports
--- "Doc Bridge rendered T: N pages written, M unchanged".
function M.render(template, key)
  template = vim.trim(template or "")
  if template == "" then
    template = "area"
  end
  local arguments = { template }
  key = vim.trim(key or ""):gsub("/+$", "")
  if key ~= "" then
    arguments[2] = template == "ownership" and { record = key } or { area = key }
  end
  M.execute("docbridge.render", arguments, function(err, result)
    if err then
      notify("render failed: " .. error_message(err), vim.log.levels.ERROR)
      return
    end
    result = type(result) == "table" and result or {}
    local pages = type(result.pages) == "table" and result.pages or {}
    local written = 0
    for _, page in ipairs(pages) do
      if type(page) == "table" and page.status == "written" then
        written = written + 1
      end
    end
    vim.notify(string.format("Doc Bridge rendered %s: %d page%s written, %d unchanged", tostring(result.template or
      template), written, written == 1 and "" or "s", #pages - written), vim.log.levels.INFO)
  end)
end

-- ------------------------------------------------------------------------------------------ doctor

--- Run the doctor (`docbridge.doctor`): the grade goes to the statusline; with `show`, the report opens in a
--- scratch buffer `docbridge://doctor`.
function M.doctor(show)
  M.execute("docbridge.doctor", { { show = false } }, function(err, result, client)
    if err then
      notify("doctor failed: " .. error_message(err), vim.log.levels.ERROR)
      return
    end
    local first = type(result) == "table" and result[1] or nil
    if not first then
      return
    end
    if client then
      grades[client.id] = first.grade
    end
    pcall(vim.cmd, "doautocmd <nomodeline> User DocBridgeStatus")
    if show then
      local name = "docbridge://doctor"
      local bufnr = vim.fn.bufnr(name)
      if bufnr == -1 then
        bufnr = api.nvim_create_buf(true, true)
        api.nvim_buf_set_name(bufnr, name)
      end
      vim.bo[bufnr].buftype = "nofile"
      vim.bo[bufnr].filetype = "text"
      vim.bo[bufnr].modifiable = true
      api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(first.text or "", "\n", { trimempty = true }))
      vim.bo[bufnr].modifiable = false
      api.nvim_set_current_buf(bufnr)
    end
  end)
end

--- The last doctor grade of a client (default: the current buffer's), or nil.
function M.grade(client_id)
  if client_id == nil then
    local client = M.client()
    client_id = client and client.id
  end
  return client_id and grades[client_id] or nil
end

-- ------------------------------------------------------------------------------------------ rename

--- Move the current buffer's file (or `old`) to `new` and keep every reference to it right: the server's
--- workspace/willRenameFiles edit is applied to the documents that link to it (left modified, as any
--- rename edit), the file is moved, the buffer follows, and the server is told with didRenameFiles.
function M.rename_file(new, old)
  local bufnr = api.nvim_get_current_buf()
  old = vim.fn.fnamemodify(old or api.nvim_buf_get_name(bufnr), ":p")
  if new == nil or new == "" then
    notify("give the new path: :DocBridgeRename {new path}", vim.log.levels.ERROR)
    return
  end
  new = vim.fn.fnamemodify(new, ":p")
  if exists(new) then
    notify(new .. " already exists", vim.log.levels.ERROR)
    return
  end
  local client = M.client(bufnr)
  local files = { { oldUri = vim.uri_from_fname(old), newUri = vim.uri_from_fname(new) } }
  local function move()
    if vim.bo[bufnr].modified then
      api.nvim_buf_call(bufnr, function()
        vim.cmd("silent write")
      end)
    end
    vim.fn.mkdir(vim.fn.fnamemodify(new, ":h"), "p")
    local ok, err = uv.fs_rename(old, new)
    if not ok then
      notify("could not move " .. old .. ": " .. tostring(err), vim.log.levels.ERROR)
      return
    end
    api.nvim_buf_call(bufnr, function()
      vim.cmd("silent keepalt file " .. vim.fn.fnameescape(new))
      vim.cmd("silent edit!")
    end)
    if client and not is_stopped(client) then
      client.notify("workspace/didRenameFiles", { files = files })
    end
    notify("moved to " .. vim.fn.fnamemodify(new, ":."))
  end
  if not client then
    move()
    return
  end
  client_request(client, "workspace/willRenameFiles", { files = files }, function(err, edit)
    if err then
      notify("rename edits failed: " .. error_message(err), vim.log.levels.ERROR)
    elseif edit then
      vim.lsp.util.apply_workspace_edit(edit, client.offset_encoding or "utf-16")
    end
    move()
  end, bufnr)
end

-- ------------------------------------------------------------------------------------------ setup

local function create_commands()
  api.nvim_create_user_command("DocBridgeSearch", function(args)
    M.search(args.args, args.bang)
  end, { nargs = "+", bang = true, desc = "Doc Bridge: search documents, modules, areas and packages" })
  api.nvim_create_user_command("DocBridgeHandoff", function(args)
    M.handoff(args.args)
  end, { nargs = "?", desc = "Doc Bridge: show the handoff for a reference or the current file" })
  api.nvim_create_user_command("DocBridgeReindex", function()
    M.reindex()
  end, { nargs = 0, desc = "Doc Bridge: rescan the workspace" })
  api.nvim_create_user_command("DocBridgeRender", function(args)
    M.render(args.fargs[1], args.fargs[2])
  end, {
    nargs = "*",
    complete = function(lead, line)
      if #vim.split(line, "%s+", { trimempty = true }) > (lead == "" and 1 or 2) then
        return {}
      end
      return vim.tbl_filter(function(name)
        return vim.startswith(name, lead)
      end, M.render_templates)
    end,
    desc = "Doc Bridge: write generated documentation (template, optional area or record)",
  })
  api.nvim_create_user_command("DocBridgeDoctor", function()
    M.doctor(true)
  end, { nargs = 0, desc = "Doc Bridge: grade the documentation and show the report" })
  api.nvim_create_user_command("DocBridgeInstall", function(args)
    M.install({ source = args.args ~= "" and vim.fn.expand(args.args) or nil, wait = args.bang })
  end, {
    nargs = "?",
    bang = true,
    complete = "file",
    desc = "Doc Bridge: set the language server up in a private environment (! waits until it is done)",
  })
  api.nvim_create_user_command("DocBridgeRename", function(args)
    M.rename_file(args.args)
  end, { nargs = 1, complete = "file", desc = "Doc Bridge: move this file and update every link to it" })
end

--- Attach every loaded buffer Doc Bridge serves (after setup, and once :DocBridgeInstall is done).
function M.attach_open_buffers()
  if not M.config.set_up or not M.config.autostart then
    return
  end
  local wanted = {}
  for _, ft in ipairs(M.config.filetypes) do
    wanted[ft] = true
  end
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    local mdx = wanted.mdx and api.nvim_buf_get_name(bufnr):sub(-4) == ".mdx"
    if api.nvim_buf_is_loaded(bufnr) and (wanted[vim.bo[bufnr].filetype] or mdx) then
      M.attach(bufnr)
    end
  end
end

function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_extend("force", vim.deepcopy(defaults), opts)
  M.config.cmd_given = opts.cmd ~= nil
  M.config.set_up = true
  if type(M.config.cmd) == "string" then
    M.config.cmd = { M.config.cmd }
  end
  warned_cmd = false
  create_commands()

  local group = api.nvim_create_augroup(GROUP, { clear = true })
  if not M.config.autostart then
    return M -- the commands only; the server is started by something else (e.g. nvim-lspconfig)
  end
  api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
    desc = "Doc Bridge: start or attach the language server",
  })

  local wanted = {}
  for _, ft in ipairs(M.config.filetypes) do
    wanted[ft] = true
  end
  -- MDX pages are served even where Neovim gives them no filetype (before 0.10, or without an MDX plugin)
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    pattern = "*.mdx",
    callback = function(args)
      if wanted.mdx and not wanted[vim.bo[args.buf].filetype] then
        M.attach(args.buf)
      end
    end,
    desc = "Doc Bridge: attach to MDX pages that have no filetype",
  })

  M.attach_open_buffers() -- buffers already open when setup runs
  return M
end

return M
