import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Limits" };

export default function LimitsPage() {
  return <NotBuiltYet href="/limits" />;
}
