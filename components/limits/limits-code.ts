// "Read these limits in code": GET /v1/limits as the Python SDK, the JS SDK and curl. No token:
// each snippet reads ORKESTR_API_KEY from the environment, as the SDKs do.

import { apiUrl, baseUrlNote, curlRequest, HOSTED_API, type Snippets } from "../../lib/code/snippet";

export function limitsSnippets(baseUrl: string = HOSTED_API): Snippets {
  return {
    python: [
      "from orkestr import Sandbox\n\n",
      "# The API key comes from ORKESTR_API_KEY.\n",
      baseUrlNote(baseUrl, "#"),
      "limits = Sandbox.limits()\n",
      "print(limits.plan, limits.allowed_sizes)\n",
      'print(f"RAM {limits.ram_used_mb} of {limits.ram_budget_mb} MiB")\n',
      'print(f"credit {limits.trial_credit_used_eur} of {limits.trial_credit_eur} EUR")\n',
      "for s in limits.sizes:\n",
      "    print(s.size, s.cpu, s.memory_mb, s.allowed)\n",
    ].join(""),
    javascript: [
      'import { Sandbox } from "orkestr";\n\n',
      "// The API key comes from ORKESTR_API_KEY; the SDK names the API's fields in camelCase.\n",
      baseUrlNote(baseUrl, "//"),
      "const limits = await Sandbox.limits();\n",
      "console.log(limits.plan, limits.allowedSizes);\n",
      "console.log(`RAM ${limits.ramUsedMb} of ${limits.ramBudgetMb} MiB`);\n",
      "console.log(`credit ${limits.trialCreditUsedEur} of ${limits.trialCreditEur} EUR`);\n",
      "for (const s of limits.sizes) console.log(s.size, s.cpu, s.memoryMb, s.allowed);\n",
    ].join(""),
    curl: curlRequest({ method: "GET", url: apiUrl(baseUrl, "/v1/limits") }),
  };
}
