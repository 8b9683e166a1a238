import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Templates" };

export default function TemplatesPage() {
  return <NotBuiltYet href="/templates" />;
}
