import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Usage" };

export default function UsagePage() {
  return <NotBuiltYet href="/usage" />;
}
