import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Sandboxes" };

export default function SandboxesPage() {
  return <NotBuiltYet href="/sandboxes" />;
}
