import { createHash } from "node:crypto";
import fs from "node:fs";
import type { Page } from "@playwright/test";
import { expect, test, type Servers } from "./fixtures";
import { seriousAxeViolations } from "./a11y";
import { screenshot, watchForErrors } from "./helpers";

// Sandbox → Files against the real engine and a real `next start`: browse, new folder, a file
// written in the editor and read back with `cat` inside the sandbox, uploads by drag and drop and
// through the presigned route (a 12 MiB file, with progress), download, delete with confirmation.
test.use({ consoleInstance: "sandbox-files" });
test.describe.configure({ mode: "serial" });

let sandboxId = "";

async function exec(servers: Servers, command: string): Promise<{ stdout: string; stderr: string; exit_code: number }> {
  const r = await servers.engine.api("POST", `/sandboxes/${sandboxId}/exec`, { command });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

const row = (page: Page, name: string) => page.locator(`[data-testid=file-row][data-name="${name}"]`);

/** Drops files on the Files panel the way a browser does: dragenter, dragover, drop with a DataTransfer. */
async function dropFiles(page: Page, files: { name: string; text: string }[]) {
  await page.getByTestId("file-drop-zone").evaluate((zone, list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([f.text], f.name, { type: "text/plain" }));
    for (const type of ["dragenter", "dragover", "drop"])
      zone.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: dt }));
  }, files);
}

test.beforeAll(async ({ servers, localEngine }) => {
  // After the owner connected: servers.engine then acts in the team account the console shows.
  void localEngine;
  const r = await servers.engine.api("POST", "/sandboxes", {
    template: "python-3.12",
    network: "off",
    metadata: { spec: "sandbox-files" },
  });
  expect(r.status, r.text).toBe(201);
  sandboxId = r.body.id;
  await exec(
    servers,
    `mkdir -p /workspace/src && printf 'import os\\n\\ndef main():\\n    # say hello\\n    print("hello", 42)\\n' > /workspace/src/app.py`,
  );
});

test.afterAll(async ({ servers }) => {
  if (sandboxId) await servers.engine.api("DELETE", `/sandboxes/${sandboxId}`);
});

test("browse folders with breadcrumbs and view a file with syntax colours", async ({ connected: page }) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  const response = await page.goto(`/sandboxes/${sandboxId}/files`);
  // proxy.ts skips the /api/v1/sandboxes/*/files routes (request bodies), never this page: its CSP is there.
  expect(response!.headers()["content-security-policy"]).toContain("'strict-dynamic'");
  await expect(page.getByRole("heading", { name: "Files", level: 2 })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Folder" })).toContainText("/workspace");
  await page.getByRole("button", { name: "Open folder src" }).click();
  await expect(page).toHaveURL(/path=%2Fworkspace%2Fsrc/);
  await expect(page.getByRole("navigation", { name: "Folder" }).locator("[aria-current=location]")).toHaveText("src");
  await page.getByRole("button", { name: "Open file app.py" }).click();
  const code = page.getByRole("region", { name: "Contents of app.py" });
  await expect(code).toContainText('print("hello", 42)');
  // The tokenizer coloured it: a keyword, a string, a number and a comment each in their own span.
  await expect(code.locator("code[data-language=python] span", { hasText: /^def$/ })).toHaveCount(1);
  await expect(code.locator("span", { hasText: '"hello"' })).toHaveCount(1);
  await expect(code.locator("span", { hasText: /^# say hello/ })).toHaveCount(1);
  await screenshot(page, "sandbox-files-view-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, "sandbox-files-view-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  // Back up with the breadcrumb; the reload keeps the place (state in the URL).
  await page.getByRole("navigation", { name: "Folder" }).getByRole("button", { name: "/workspace" }).click();
  await expect(row(page, "src")).toBeVisible();
  await page.reload();
  await expect(row(page, "src")).toBeVisible();
  expect(problems).toEqual([]);
});

test("new folder, then a new file written in the editor and read back inside the sandbox", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`/sandboxes/${sandboxId}/files`);
  await page.getByRole("button", { name: "New folder" }).click();
  const folderDialog = page.getByRole("dialog", { name: "New folder" });
  await folderDialog.getByLabel("Folder name").fill("a/b");
  await folderDialog.getByRole("button", { name: "Create folder" }).click();
  await expect(folderDialog.getByText(/cannot contain “\/”/)).toBeVisible();
  await folderDialog.getByLabel("Folder name").fill("notes");
  await folderDialog.getByRole("button", { name: "Create folder" }).click();
  await expect(folderDialog).toBeHidden();
  await expect(row(page, "notes")).toBeVisible();
  expect((await exec(servers, "test -d /workspace/notes && echo yes")).stdout.trim()).toBe("yes");

  await page.getByRole("button", { name: "Open folder notes" }).click();
  await expect(page.getByTestId("folder-empty")).toBeVisible();
  await page.getByRole("button", { name: "New file" }).click();
  const fileDialog = page.getByRole("dialog", { name: "New file" });
  await fileDialog.getByLabel("File name").fill("hello.txt");
  await fileDialog.getByRole("button", { name: "Create file" }).click();
  const editor = page.getByRole("textbox", { name: "Edit hello.txt" });
  await expect(editor).toBeFocused();
  await editor.fill("Hello from Baton\nsecond line: ünïcödé ✓\n");
  await screenshot(page, "sandbox-files-edit-light");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByText("Saved /workspace/notes/hello.txt")).toBeVisible();
  expect((await exec(servers, "cat /workspace/notes/hello.txt")).stdout).toBe(
    "Hello from Baton\nsecond line: ünïcödé ✓\n",
  );

  // Edit again and save with the keyboard.
  await page.getByRole("button", { name: "Edit", exact: true }).click();
  await editor.press("End");
  await editor.press("ControlOrMeta+End");
  await editor.pressSequentially("third\n");
  await editor.press("ControlOrMeta+s");
  await expect(page.getByRole("region", { name: "Contents of hello.txt" })).toContainText("third");
  expect((await exec(servers, "cat /workspace/notes/hello.txt")).stdout).toBe(
    "Hello from Baton\nsecond line: ünïcödé ✓\nthird\n",
  );
  expect(problems).toEqual([]);
});

test("upload by drag and drop, and a 12 MiB file through the presigned upload with progress", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`/sandboxes/${sandboxId}/files`);
  await expect(row(page, "src")).toBeVisible();

  await dropFiles(page, [
    { name: "dropped.txt", text: "dropped by Playwright\n" },
    { name: "second.csv", text: "a,b\n1,2\n" },
  ]);
  await expect(page.getByTestId("upload-row").filter({ hasText: "dropped.txt" })).toHaveAttribute(
    "data-status",
    "done",
  );
  await expect(page.getByTestId("upload-row").filter({ hasText: "second.csv" })).toHaveAttribute("data-status", "done");
  await expect(row(page, "dropped.txt")).toBeVisible();
  expect((await exec(servers, "cat /workspace/dropped.txt /workspace/second.csv")).stdout).toBe(
    "dropped by Playwright\na,b\n1,2\n",
  );

  // Dropping a file that exists asks first.
  await dropFiles(page, [{ name: "dropped.txt", text: "replaced\n" }]);
  const replace = page.getByRole("dialog", { name: "Replace an existing file?" });
  await expect(replace).toContainText("dropped.txt");
  await replace.getByRole("button", { name: "Replace and upload" }).click();
  await expect(page.getByTestId("upload-row").filter({ hasText: "dropped.txt" }).last()).toHaveAttribute(
    "data-status",
    "done",
  );
  expect((await exec(servers, "cat /workspace/dropped.txt")).stdout).toBe("replaced\n");

  // A large file: presign-upload, then an XHR PUT to Baton's own files/raw, throttled so the progress shows.
  const big = Buffer.alloc(12 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE((i * 2654435761) >>> 0, i);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: 3 * 1024 * 1024,
  });
  const presign = page.waitForResponse(
    (r) => r.url().includes("/files/presign-upload") && r.request().method() === "POST",
  );
  const put = page.waitForResponse(
    (r) => r.url().includes("/files/raw?path=%2Fworkspace%2Fbig.bin") && r.request().method() === "PUT",
    { timeout: 60_000 },
  );
  await page
    .locator('input[type="file"]')
    .setInputFiles({ name: "big.bin", mimeType: "application/octet-stream", buffer: big });
  expect((await presign).status()).toBe(200);
  const bigRow = page.getByTestId("upload-row").filter({ hasText: "big.bin" });
  await expect(bigRow).toHaveAttribute("data-status", "uploading");
  // Part-way: between 1 and 99 percent, with the bar following.
  await expect(bigRow).toContainText(/Uploading ([1-9]|[1-9]\d)% · /, { timeout: 20_000 });
  const midway = Number(await bigRow.getByRole("progressbar").getAttribute("value"));
  expect(midway).toBeGreaterThan(0);
  expect(midway).toBeLessThan(100);
  await screenshot(page, "sandbox-files-upload-progress-light");
  expect((await put).status()).toBe(201);
  await expect(bigRow).toHaveAttribute("data-status", "done", { timeout: 30_000 });
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  const sum = (await exec(servers, "wc -c < /workspace/big.bin; sha256sum /workspace/big.bin")).stdout.split("\n");
  expect(Number(sum[0])).toBe(big.length);
  expect(sum[1]!.split(" ")[0]).toBe(createHash("sha256").update(big).digest("hex"));
  await expect(row(page, "big.bin")).toContainText("12 MiB");
  expect(problems).toEqual([]);
});

test("download through the presigned link", async ({ connected: page }) => {
  const problems = watchForErrors(page);
  await page.goto(`/sandboxes/${sandboxId}/files?path=%2Fworkspace%2Fsrc`);
  const download = page.waitForEvent("download");
  await row(page, "app.py").getByRole("button", { name: "Download app.py" }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe("app.py");
  expect(fs.readFileSync(await file.path(), "utf8")).toBe(
    'import os\n\ndef main():\n    # say hello\n    print("hello", 42)\n',
  );
  expect(problems).toEqual([]);
});

test("delete a file and a folder, after confirmation", async ({ connected: page, servers }) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto(`/sandboxes/${sandboxId}/files`);
  await row(page, "dropped.txt").getByRole("button", { name: "Delete dropped.txt" }).click();
  const confirm = page.getByRole("dialog", { name: "Delete this file?" });
  await expect(confirm).toContainText("/workspace/dropped.txt");
  await screenshot(page, "sandbox-files-delete-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(confirm).toBeHidden();
  expect((await exec(servers, "test -e /workspace/dropped.txt && echo kept")).stdout.trim()).toBe("kept");

  await row(page, "dropped.txt").getByRole("button", { name: "Delete dropped.txt" }).click();
  await confirm.getByRole("button", { name: "Delete file" }).click();
  await expect(row(page, "dropped.txt")).toHaveCount(0);
  expect((await exec(servers, "test -e /workspace/dropped.txt || echo gone")).stdout.trim()).toBe("gone");

  // A folder with a file in it goes as a whole, and the dialog says so.
  await row(page, "notes").getByRole("button", { name: "Delete notes" }).click();
  const folderConfirm = page.getByRole("dialog", { name: "Delete this folder?" });
  await expect(folderConfirm).toContainText("everything in it");
  await folderConfirm.getByRole("button", { name: "Delete folder" }).click();
  await expect(row(page, "notes")).toHaveCount(0);
  expect((await exec(servers, "test -e /workspace/notes || echo gone")).stdout.trim()).toBe("gone");
  expect(problems).toEqual([]);
});

test("a paused sandbox is not read: the tab says so and offers Resume", async ({ connected: page, servers }) => {
  const problems = watchForErrors(page);
  const r = await servers.engine.api("POST", "/sandboxes", { template: "python-3.12", network: "off" });
  const paused = r.body.id as string;
  try {
    expect((await servers.engine.api("POST", `/sandboxes/${paused}/pause`)).status).toBe(200);
    await page.goto(`/sandboxes/${paused}/files`);
    await expect(page.getByRole("heading", { name: "This sandbox is paused" })).toBeVisible();
    await page.getByRole("button", { name: "Resume sandbox" }).click();
    await expect(page.getByTestId("folder-empty").or(page.getByTestId("file-row").first())).toBeVisible({
      timeout: 30_000,
    });
    expect((await servers.engine.api("GET", `/sandboxes/${paused}`)).body.status).toBe("running");
  } finally {
    await servers.engine.api("DELETE", `/sandboxes/${paused}`);
  }
  expect(problems).toEqual([]);
});

test("with a volume attached, /persist is browsable beside /workspace", async ({ connected: page, servers }) => {
  const problems = watchForErrors(page);
  const vol = await servers.engine.api("POST", "/volumes", { name: `files-spec-${Date.now()}`, size_gb: 1 });
  expect(vol.status, vol.text).toBe(201);
  const r = await servers.engine.api("POST", "/sandboxes", {
    template: "python-3.12",
    network: "off",
    volume: vol.body.id,
  });
  expect(r.status, r.text).toBe(201);
  const withVolume = r.body.id as string;
  try {
    const w = await servers.engine.api("POST", `/sandboxes/${withVolume}/exec`, {
      command: "echo kept > /persist/kept.txt",
    });
    expect(w.body.exit_code, w.text).toBe(0);
    await page.goto(`/sandboxes/${withVolume}/files`);
    const location = page.getByRole("group", { name: "Location" });
    await expect(location.getByRole("button", { name: "/workspace" })).toHaveAttribute("aria-pressed", "true");
    await location.getByRole("button", { name: /\/persist/ }).click();
    await expect(page.getByRole("navigation", { name: "Folder" }).locator("[aria-current=location]")).toHaveText(
      "/persist",
    );
    await page.getByRole("button", { name: "Open file kept.txt" }).click();
    await expect(page.getByRole("region", { name: "Contents of kept.txt" })).toContainText("kept");
    await screenshot(page, "sandbox-files-persist-light");
  } finally {
    await servers.engine.api("DELETE", `/sandboxes/${withVolume}`);
  }
  expect(problems).toEqual([]);
});
