-- Headless: a new user's first start, from the README's plain setup (the user's init.lua has only it) with no
-- docbridge-lsp on PATH. :DocBridgeInstall! sets the server up in Neovim's data folder; then diagnostics,
-- go to definition and :DocBridgeSearch! work. Run by tests/test_nvim_install.py, which reads the JSON report
-- ({checks = {{name, ok, detail}}}) written to DOCBRIDGE_E2E_REPORT.

local root = assert(os.getenv("DOCBRIDGE_E2E_ROOT"))
local report_path = assert(os.getenv("DOCBRIDGE_E2E_REPORT"))
local timeout = tonumber(os.getenv("DOCBRIDGE_E2E_TIMEOUT_MS") or "") or 60000
local checks, notified = {}, {}
local failed = false

local function check(name, ok, detail)
  table.insert(checks, { name = name, ok = ok and true or false, detail = detail and tostring(detail) or "" })
  failed = failed or not ok
  io.stderr:write((ok and "ok   " or "FAIL ") .. name .. " " .. (detail and tostring(detail) or "") .. "\n")
  return ok
end

local function finish()
  local file = assert(io.open(report_path, "w"))
  file:write(vim.fn.json_encode({ checks = checks, notified = notified }))
  file:close()
  vim.cmd(failed and "cquit 1" or "qall!")
end

local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(notified, { message = message, level = level })
  return notify(message, level, opts)
end

local function clients(bufnr)
  local out = {}
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == "docbridge" then
      table.insert(out, client)
    end
  end
  return out
end

local ok, err = pcall(function()
  local docbridge = require("docbridge")
  check("docbridge-lsp is not on PATH", vim.fn.executable("docbridge-lsp") == 0, vim.fn.exepath("docbridge-lsp"))
  check("the init.lua's setup defined :DocBridgeInstall", vim.fn.exists(":DocBridgeInstall") == 2)

  -- a document opened before the server exists: the plugin says what to do
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/docs/architecture.md"))
  local arch = vim.api.nvim_get_current_buf()
  local said = false
  for _, n in ipairs(notified) do
    said = said or n.message:find(":DocBridgeInstall", 1, true) ~= nil
  end
  check("without a server the notification names :DocBridgeInstall", said, vim.inspect(notified))

  vim.cmd("DocBridgeInstall!")
  check("the server is installed in Neovim's data folder", vim.fn.executable(docbridge.installed_server()) == 1,
    docbridge.installed_server())
  check("it is the command the plugin starts", vim.deep_equal(docbridge.server_cmd(), { docbridge.installed_server() }),
    vim.inspect(docbridge.server_cmd()))

  -- the document already open is attached once the install is done, and its diagnostics arrive
  local arrived = vim.wait(timeout, function()
    for _, d in ipairs(vim.diagnostic.get(arch)) do
      if d.source == "docbridge" and d.code == "LINK_BROKEN" then
        return true
      end
    end
    return false
  end, 50)
  check("LINK_BROKEN arrives for the document opened before the install", arrived,
    #vim.diagnostic.get(arch) .. " diagnostics")

  -- go to definition from `createInvoice` in docs/billing.md (line 20)
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/docs/billing.md"))
  local billing = vim.api.nvim_get_current_buf()
  vim.wait(timeout, function()
    return #clients(billing) > 0
  end, 20)
  local client = clients(billing)[1]
  local line = vim.api.nvim_buf_get_lines(billing, 19, 20, false)[1] or ""
  local col = line:find("createInvoice", 1, true) or 1
  vim.api.nvim_win_set_cursor(0, { 20, col + 2 })
  local params = vim.lsp.util.make_position_params(0, client and client.offset_encoding or "utf-16")
  local responses = vim.lsp.buf_request_sync(billing, "textDocument/definition", params, 20000) or {}
  local result = client and (responses[client.id] or {}).result
  local location = type(result) == "table" and result[1] or result
  local uri = type(location) == "table" and (location.uri or location.targetUri) or ""
  local range = type(location) == "table" and (location.range or location.targetSelectionRange) or nil
  check("definition lands on src/billing/invoice.ts:44", uri:sub(-#"src/billing/invoice.ts") == "src/billing/invoice.ts"
    and range ~= nil and range.start.line == 43, vim.inspect(result))

  -- :DocBridgeSearch! fills the quickfix list, the module first
  vim.fn.setqflist({}, "r", { title = "empty", items = {} })
  vim.cmd("DocBridgeSearch! createInvoice")
  vim.wait(timeout, function()
    return #vim.fn.getqflist() > 0
  end, 20)
  local qf = vim.fn.getqflist()
  local first = qf[1] and vim.api.nvim_buf_get_name(qf[1].bufnr) or ""
  check(":DocBridgeSearch! lists src/billing/invoice.ts first", first:sub(-#"src/billing/invoice.ts")
    == "src/billing/invoice.ts", #qf .. " items; first " .. first)
end)
if not ok then
  check("the script ran to the end", false, err)
end
finish()
